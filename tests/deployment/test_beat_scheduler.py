"""The beat's scheduler (aggregates.jobs.beat) in process, two of them on
one database, sending through a stand-in for the broker: only the beat
holding the lease sends, each run is written as it is sent, a beat whose
lease was taken stops sending, and the next beat takes over from the last
run the previous one wrote. (test_beat.py runs real beats.)"""

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask, PeriodicTasks

from aggregates.jobs import beat
from aggregates.jobs.models import Lease
from config.celery import app

pytestmark = pytest.mark.django_db(transaction=True)  # the scheduler commits and closes connections as it goes

LEASE = 3.0


@pytest.fixture
def sent(settings, monkeypatch):
    """One schedule, every second, due now; the (schedule, beat) of each send."""
    settings.BEAT_LEASE_SECONDS = LEASE
    PeriodicTask.objects.update(enabled=False)
    every = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(
        name="every-second", task="test.every_second", interval=every, last_run_at=timezone.now() - timedelta(hours=1)
    )
    sends = []
    monkeypatch.setattr(beat.SingleBeatScheduler, "producer", None, raising=False)
    monkeypatch.setattr(
        beat.SingleBeatScheduler, "send_task", lambda scheduler, name, *a, **kw: sends.append((name, scheduler.token))
    )
    return sends


def the_schedule():
    return PeriodicTask.objects.get(name="every-second")


def test_only_the_beat_holding_the_lease_sends_and_each_run_is_written_as_it_is_sent(sent):
    first, second = beat.SingleBeatScheduler(app=app), beat.SingleBeatScheduler(app=app)
    first.tick()
    assert sent == [("test.every_second", first.token)]
    assert the_schedule().total_run_count == 1
    assert timezone.now() - the_schedule().last_run_at < timedelta(seconds=5)
    assert second.tick() == pytest.approx(LEASE / 3)  # it waits, and asks again in a third of the lease
    assert Lease.objects.get(name=beat.LEASE_NAME).holder == first.token
    time.sleep(1.1)
    second.tick(), first.tick()
    assert sent == [("test.every_second", first.token)] * 2


def test_a_beat_whose_lease_was_taken_sends_nothing_more(sent, caplog):
    first = beat.SingleBeatScheduler(app=app)
    first.tick()
    Lease.objects.update(holder="a beat elsewhere", expires_at=timezone.now() + timedelta(hours=1))
    first.renewed_at -= LEASE  # its renewal is due
    time.sleep(1.1)  # and so is the schedule
    assert first.tick() == pytest.approx(LEASE / 3)
    assert len(sent) == 1
    assert "lost the beat lease" in caplog.text


def test_the_next_beat_takes_over_from_the_last_run_the_previous_one_wrote(sent, caplog):
    # Both read the schedule now, as due an hour ago.
    first, second = beat.SingleBeatScheduler(app=app), beat.SingleBeatScheduler(app=app)
    first.tick()
    assert second.tick() == pytest.approx(LEASE / 3)  # waits
    first.close()  # stopped: it lets go at once
    assert "let go of the beat lease" in caplog.text
    second.tick()  # takes over: the run the first wrote a moment ago is not due again yet
    assert sent == [("test.every_second", first.token)]
    time.sleep(1.1)
    second.tick()
    assert sent == [("test.every_second", first.token), ("test.every_second", second.token)]


def test_a_beat_taking_the_lease_again_while_a_schedule_changed_sends_once(sent):
    first = beat.SingleBeatScheduler(app=app)
    first.tick()
    Lease.objects.update(holder="a beat elsewhere", expires_at=timezone.now() + timedelta(hours=1))
    first.renewed_at -= LEASE
    first.tick()  # lost it
    time.sleep(1.1)  # the schedule is due again
    Lease.objects.update(expires_at=timezone.now() - timedelta(seconds=1))  # the other beat died
    PeriodicTasks.update_changed()  # and meanwhile someone edited a schedule (in /admin/)
    first.tick()  # takes the lease again and sends what is due
    first.tick()
    assert len(sent) == 2
