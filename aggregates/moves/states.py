"""The kinds of move and the states each goes through, with Nova's names:
the server's task state and the migration's status once a move is
accepted, while it runs and once it moved; its notifications and the
action named in Nova's conflict messages. A resize is a cold migration
to a new flavor (Nova's migration_type "resize")."""

from aggregates.moves.models import ServerMigration
from aggregates.servers import actions

LIVE, COLD, EVACUATION = ServerMigration.LIVE, ServerMigration.COLD, ServerMigration.EVACUATION
RESIZE = ServerMigration.RESIZE
# The kinds a job may ask for (move_server); a resize comes from its own API.
KINDS = (LIVE, COLD, EVACUATION)
# The kinds that end in VERIFY_RESIZE, the source held by the migration until confirmed or reverted.
RESIZING = (COLD, RESIZE)

# vm_states and task_states of moves (Nova's names).
RESIZED = "resized"
STOPPED = "stopped"
PAUSED = "paused"
MIGRATING = "migrating"
RESIZE_PREP = "resize_prep"
RESIZE_MIGRATING = "resize_migrating"
RESIZE_REVERTING = "resize_reverting"
REBUILDING = "rebuilding"

# The task state of a server while a move of each kind is accepted / running.
TASK_ACCEPTED = {LIVE: MIGRATING, COLD: RESIZE_PREP, EVACUATION: REBUILDING, RESIZE: RESIZE_PREP}
TASK_RUNNING = {LIVE: MIGRATING, COLD: RESIZE_MIGRATING, EVACUATION: REBUILDING, RESIZE: RESIZE_MIGRATING}
# The migration's status once accepted / while running / once moved.
STATUS_ACCEPTED = {
    LIVE: ServerMigration.QUEUED,
    COLD: ServerMigration.PRE_MIGRATING,
    EVACUATION: "accepted",
    RESIZE: ServerMigration.PRE_MIGRATING,
}
STATUS_RUNNING = {
    LIVE: ServerMigration.RUNNING,
    COLD: ServerMigration.MIGRATING,
    EVACUATION: "pre-migrating",
    RESIZE: ServerMigration.MIGRATING,
}
STATUS_MOVED = {
    LIVE: ServerMigration.COMPLETED,
    COLD: ServerMigration.FINISHED,
    EVACUATION: ServerMigration.DONE,
    RESIZE: ServerMigration.FINISHED,
}
# The notification names of each kind (Nova's instance.<action>.start/end).
EVENT = {
    LIVE: "instance.live_migration",
    COLD: "instance.migrate",
    EVACUATION: "instance.evacuate",
    RESIZE: "instance.resize",
}
# The instance action of each kind, and its events (the conductor's, then the
# compute host's), with Nova's names.
INSTANCE_ACTION = {
    LIVE: actions.LIVE_MIGRATION,
    COLD: actions.MIGRATE,
    EVACUATION: actions.EVACUATE,
    RESIZE: actions.RESIZE,
}
CONDUCTOR_EVENT = {
    LIVE: actions.LIVE_MIGRATE_INSTANCE,
    COLD: actions.MIGRATE_SERVER,
    EVACUATION: actions.REBUILD_SERVER,
    RESIZE: actions.MIGRATE_SERVER,
}
COMPUTE_EVENT = {
    LIVE: actions.LIVE_MIGRATION_EVENT,
    COLD: actions.RESIZE_INSTANCE,
    EVACUATION: actions.REBUILD_INSTANCE,
    RESIZE: actions.RESIZE_INSTANCE,
}
# The action names in Nova's conflict messages.
ACTION = {LIVE: "os-migrateLive", COLD: "migrate", EVACUATION: "evacuate", RESIZE: "resize"}
