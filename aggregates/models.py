"""Every model of the ``aggregates`` app, for Django to register: each
domain package keeps its own in its ``models`` module (tables and the app
label ``aggregates`` are unchanged). Code imports models from their domain
package, never from here."""

from aggregates.addressing.models import AddressAllocation, AddressPool  # noqa: F401
from aggregates.audit.models import Event  # noqa: F401
from aggregates.capacity.models import CapacitySample  # noqa: F401
from aggregates.flavors.models import Flavor, FlavorAccess, FlavorExtraSpec  # noqa: F401
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata  # noqa: F401
from aggregates.hosts.models import ComputeNode, Service  # noqa: F401
from aggregates.identity.models import Project, RoleAssignment, Token, UserAttributes  # noqa: F401
from aggregates.images.models import Image, ImageMember, ImageProperty, ImageTag  # noqa: F401
from aggregates.jobs.models import Lease  # noqa: F401
from aggregates.maintenance.models import MaintenanceItem, MaintenanceJob  # noqa: F401
from aggregates.mirroring.models import (  # noqa: F401
    OutboxRow,
    PlacementMirrorRequest,
    ProviderSyncRequest,
    ReconciliationRun,
)
from aggregates.moves.models import ServerMigration  # noqa: F401
from aggregates.precache.models import (  # noqa: F401
    CacheCheck,
    ImageCacheHost,
    ImageCacheJob,
    ImageCacheResult,
    PinnedImage,
)
from aggregates.quotas.models import ProjectQuota, ProjectQuotaLock, QuotaClassLimit  # noqa: F401
from aggregates.scheduling.models import SchedulingDecision  # noqa: F401
from aggregates.server_groups.models import ServerGroup, ServerGroupMember  # noqa: F401
from aggregates.servers.models import InstanceAction, InstanceActionEvent, Server, ServerTag  # noqa: F401
