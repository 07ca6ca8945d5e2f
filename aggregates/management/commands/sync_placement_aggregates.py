"""``manage.py sync_placement_aggregates``: make placement's aggregate
associations match Corral's host aggregates, like ``nova-manage placement
sync_aggregates``, and more: every node of a host, ``--prune`` for stale
associations, ``--dry-run``. First, every compute node gets its resource
provider, with the node's inventories and the COMPUTE_STATUS_DISABLED trait
while its service is disabled (what the resource tracker keeps up to date).

Exit codes (nova-manage's where they apply): 0 done; 2 placement could not
be read; 3 some update failed, a provider's included (the others were still
made); 5 member hosts without compute node; 6 member hosts whose node has no
resource provider (a dry run: the others are created);
255 unexpected error. Nova's 1 (several nodes per host) and 4 (no cell
mapping) do not arise in Corral.
"""

import sys
import traceback
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from aggregates.mirroring import reconciler
from aggregates.mirroring.models import ReconciliationRun


class Command(BaseCommand):
    help = (
        "Create the missing resource providers of compute nodes and correct their inventories and disabled "
        "trait; add the missing aggregate associations of the hosts' resource providers in placement and, "
        "with --prune, remove the stale ones (a Corral aggregate on the provider of a host that left it)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--verbose", action="store_true", help="print every aggregate, host and association")
        parser.add_argument("--dry-run", action="store_true", help="show the drift and change nothing")
        parser.add_argument(
            "--prune",
            action="store_true",
            help="also remove associations of Corral aggregates with hosts that are not members",
        )

    def handle(
        self, *args: Any, verbose: bool = False, dry_run: bool = False, prune: bool = False, **options: Any
    ) -> None:
        try:
            result = reconciler.reconcile(ReconciliationRun.COMMAND, dry_run=dry_run, prune=prune)
        except Exception:  # noqa: BLE001 - nova-manage's 255 with the traceback
            self.stderr.write("An error has occurred:\n" + traceback.format_exc())
            sys.exit(reconciler.EXIT_UNEXPECTED)
        shown = {reconciler.ERROR, reconciler.SUMMARY}
        if verbose or dry_run:
            shown.add(reconciler.DRIFT)
        if verbose:
            shown.add(reconciler.VERBOSE)
        for kind, text in result.lines:
            if kind in shown:
                (self.stderr if kind == reconciler.ERROR else self.stdout).write(text)
        if result.run.exit_code:
            sys.exit(result.run.exit_code)
