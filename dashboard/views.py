"""Console views. They read through service functions and models; they hold no rules."""
from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count
from django.shortcuts import render

from aggregates.models import Aggregate, AggregateMetadata, Event, Flavor, Service


@staff_member_required(login_url="dashboard:login")
def home(request):
    compute = Service.objects.filter(binary=Service.COMPUTE)
    services = list(compute)
    context = {
        "counts": {
            "aggregates": Aggregate.objects.count(),
            "zones": AggregateMetadata.objects.filter(key="availability_zone").values("value").distinct().count(),
            "hosts": len(services),
            "hosts_up": sum(1 for s in services if s.is_up),
            "hosts_disabled": compute.filter(disabled=True).count(),
            "flavors": Flavor.objects.count(),
        },
        "aggregates": Aggregate.objects.annotate(host_count=Count("host_items")).order_by("name")[:50],
        "events": Event.objects.order_by("-id")[:10],
    }
    return render(request, "dashboard/home.html", context)
