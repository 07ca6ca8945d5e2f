"""The kinds of move and the states each goes through, with Nova's names:
the server's task state and the migration's status once a move is
accepted, while it runs and once it moved; its notifications and the
action named in Nova's conflict messages."""

from aggregates.moves.models import ServerMigration

LIVE, COLD, EVACUATION = ServerMigration.LIVE, ServerMigration.COLD, ServerMigration.EVACUATION
KINDS = (LIVE, COLD, EVACUATION)

# vm_states and task_states of moves (Nova's names).
RESIZED = "resized"
STOPPED = "stopped"
PAUSED = "paused"
MIGRATING = "migrating"
RESIZE_PREP = "resize_prep"
RESIZE_MIGRATING = "resize_migrating"
REBUILDING = "rebuilding"

# The task state of a server while a move of each kind is accepted / running.
TASK_ACCEPTED = {LIVE: MIGRATING, COLD: RESIZE_PREP, EVACUATION: REBUILDING}
TASK_RUNNING = {LIVE: MIGRATING, COLD: RESIZE_MIGRATING, EVACUATION: REBUILDING}
# The migration's status once accepted / while running / once moved.
STATUS_ACCEPTED = {LIVE: ServerMigration.QUEUED, COLD: ServerMigration.PRE_MIGRATING, EVACUATION: "accepted"}
STATUS_RUNNING = {LIVE: ServerMigration.RUNNING, COLD: ServerMigration.MIGRATING, EVACUATION: "pre-migrating"}
STATUS_MOVED = {LIVE: ServerMigration.COMPLETED, COLD: ServerMigration.FINISHED, EVACUATION: ServerMigration.DONE}
# The notification names of each kind (Nova's instance.<action>.start/end).
EVENT = {LIVE: "instance.live_migration", COLD: "instance.migrate", EVACUATION: "instance.evacuate"}
# The action names in Nova's conflict messages.
ACTION = {LIVE: "os-migrateLive", COLD: "migrate", EVACUATION: "evacuate"}
