"""The kinds of move and the states each goes through, with Nova's names:
the server's task state and the migration's status once a move is
accepted, while it runs and once it moved; its notifications and the
action named in Nova's conflict messages."""

from aggregates.moves.models import ServerMigration
from aggregates.servers import actions

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
# The instance action of each kind, and its events (the conductor's, then the
# compute host's), with Nova's names.
INSTANCE_ACTION = {LIVE: actions.LIVE_MIGRATION, COLD: actions.MIGRATE, EVACUATION: actions.EVACUATE}
CONDUCTOR_EVENT = {
    LIVE: actions.LIVE_MIGRATE_INSTANCE,
    COLD: actions.MIGRATE_SERVER,
    EVACUATION: actions.REBUILD_SERVER,
}
COMPUTE_EVENT = {
    LIVE: actions.LIVE_MIGRATION_EVENT,
    COLD: actions.RESIZE_INSTANCE,
    EVACUATION: actions.REBUILD_INSTANCE,
}
# The action names in Nova's conflict messages.
ACTION = {LIVE: "os-migrateLive", COLD: "migrate", EVACUATION: "evacuate"}
