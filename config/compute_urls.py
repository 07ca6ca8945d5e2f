"""The compute API v2.1 routes table (mounted at /compute/v2.1/ by
config.urls): every route of every domain, in one place, each to its
domain's view. It lives in the URLconf layer, not in the compute API's
framework (aggregates.compute_api), which the domains' views import."""

from django.urls import path, re_path

from aggregates.addressing import api as addressing
from aggregates.capacity import api as capacity
from aggregates.compute_api import extensions, versions
from aggregates.compute_api.base import UnknownRouteView
from aggregates.flavors import api as flavors
from aggregates.host_aggregates import api as aggregates
from aggregates.hosts.api import hypervisors, os_hosts, os_services, registrations
from aggregates.images.api import compute_proxy
from aggregates.maintenance import api as maintenance
from aggregates.moves import api as moves
from aggregates.precache import api as precache
from aggregates.quotas import api as quotas
from aggregates.scheduling import api as scheduling
from aggregates.server_groups import api as server_groups
from aggregates.servers import api as servers
from aggregates.zones import api as zones

urlpatterns = [
    path("", versions.version_v21),
    # Nova's fixed list of v2.1 extensions, every microversion
    path("extensions", extensions.ExtensionListView.as_view()),
    path("extensions/<str:alias>", extensions.ExtensionView.as_view()),
    # host aggregates
    path("os-aggregates", aggregates.AggregateListView.as_view()),
    path("os-aggregates/<str:aggregate_id>", aggregates.AggregateDetailView.as_view()),
    path("os-aggregates/<str:aggregate_id>/action", aggregates.AggregateActionView.as_view()),
    # image pre-caching (2.81+) and its jobs
    path("os-aggregates/<str:aggregate_id>/images", precache.AggregateImagesView.as_view()),
    path("os-aggregates/<str:aggregate_id>/pinned-images", precache.PinnedImagesView.as_view()),
    path("os-aggregates/<str:aggregate_id>/pinned-images/recheck", precache.PinnedImagesRecheckView.as_view()),
    path("os-aggregates/<str:aggregate_id>/pinned-images/<str:image_id>", precache.PinnedImageView.as_view()),
    path("os-image-cache-jobs", precache.ImageCacheJobListView.as_view()),
    path("os-image-cache-jobs/<str:job_id>", precache.ImageCacheJobView.as_view()),
    # availability zones
    path("os-availability-zone", zones.AvailabilityZoneListView.as_view()),
    path("os-availability-zone/detail", zones.AvailabilityZoneDetailView.as_view()),
    # flavors, their extra specs and access
    path("flavors", flavors.FlavorListView.as_view()),
    path("flavors/detail", flavors.FlavorDetailListView.as_view()),
    path("flavors/<str:flavor_id>", flavors.FlavorView.as_view()),
    path("flavors/<str:flavor_id>/action", flavors.FlavorActionView.as_view()),
    path("flavors/<str:flavor_id>/os-flavor-access", flavors.FlavorAccessView.as_view()),
    path("flavors/<str:flavor_id>/os-extra_specs", flavors.ExtraSpecListView.as_view()),
    path("flavors/<str:flavor_id>/os-extra_specs/<str:key>", flavors.ExtraSpecView.as_view()),
    # hosts: services, compute nodes, registration
    path("os-services", os_services.ServiceListView.as_view()),
    path("os-services/<str:service_ref>", os_services.ServiceDetailView.as_view()),
    path("os-hypervisors", hypervisors.HypervisorListView.as_view()),
    path("os-hypervisors/detail", hypervisors.HypervisorDetailListView.as_view()),
    path("os-hypervisors/statistics", hypervisors.HypervisorStatisticsView.as_view()),
    path("os-hypervisors/<str:node_ref>", hypervisors.HypervisorView.as_view()),
    path("os-hypervisors/<str:node_ref>/uptime", hypervisors.HypervisorUptimeView.as_view()),
    path("os-hypervisors/<str:pattern>/search", hypervisors.HypervisorSearchView.as_view()),
    path("os-hypervisors/<str:pattern>/servers", hypervisors.HypervisorServersView.as_view()),
    path("os-host-registrations", registrations.HostRegistrationView.as_view()),
    # host maintenance and capacity headroom (Corral's own), Nova's legacy os-hosts (to 2.42)
    path("os-hosts", os_hosts.HostListView.as_view()),
    path("os-hosts/<str:host>/maintenance", maintenance.HostMaintenanceView.as_view()),
    path("os-hosts/<str:host>", maintenance.HostView.as_view()),
    path("os-maintenance-jobs", maintenance.MaintenanceJobListView.as_view()),
    path("os-maintenance-jobs/<str:job_id>", maintenance.MaintenanceJobView.as_view()),
    path("os-capacity-headroom", maintenance.CapacityHeadroomView.as_view()),
    # capacity by flavor (Corral's own)
    path("os-capacity", capacity.CapacityView.as_view()),
    # Nova's image proxy (to 2.35; its metadata to 2.38) over Corral's images
    path("images", compute_proxy.ImageListView.as_view()),
    path("images/detail", compute_proxy.ImageDetailListView.as_view()),
    path("images/<str:image_id>", compute_proxy.ImageView.as_view()),
    path("images/<str:image_id>/metadata", compute_proxy.ImageMetadataView.as_view()),
    path("images/<str:image_id>/metadata/<str:key>", compute_proxy.ImageMetadataItemView.as_view()),
    # server groups
    path("os-server-groups", server_groups.ServerGroupListView.as_view()),
    path("os-server-groups/<str:group_id>", server_groups.ServerGroupView.as_view()),
    # servers
    path("servers", servers.ServerListView.as_view()),
    path("servers/detail", servers.ServerDetailListView.as_view()),
    path("servers/<str:server_id>", servers.ServerView.as_view()),
    path("servers/<str:server_id>/metadata", servers.ServerMetadataView.as_view()),
    path("servers/<str:server_id>/metadata/<str:key>", servers.ServerMetadataItemView.as_view()),
    path("servers/<str:server_id>/tags", servers.ServerTagListView.as_view()),
    path("servers/<str:server_id>/tags/<str:tag>", servers.ServerTagView.as_view()),
    path("servers/<str:server_id>/os-instance-actions", servers.InstanceActionListView.as_view()),
    path("servers/<str:server_id>/os-instance-actions/<str:request_id>", servers.InstanceActionView.as_view()),
    path("servers/<str:server_id>/os-server-password", servers.ServerPasswordView.as_view()),
    # a server's addresses (Nova's ips), address pools (Corral's own)
    path("servers/<str:server_id>/ips", servers.ServerIpsView.as_view()),
    path("servers/<str:server_id>/ips/<str:network>", servers.ServerIpsNetworkView.as_view()),
    path("servers/<str:server_id>/os-security-groups", servers.ServerSecurityGroupsView.as_view()),
    path("os-address-pools", addressing.AddressPoolListView.as_view()),
    path("os-address-pools/<str:pool_id>", addressing.AddressPoolView.as_view()),
    # server actions, each to its domain's handler: the servers' own (state reset,
    # forceDelete, restore) and the moves
    path(
        "servers/<str:server_id>/action",
        servers.ServerActionView.as_view(handlers={**servers.ACTIONS, **moves.ACTIONS}),
    ),
    # server moves: migrations
    path("os-migrations", moves.MigrationListView.as_view()),
    path("servers/<str:server_id>/migrations", moves.ServerMigrationListView.as_view()),
    path("servers/<str:server_id>/migrations/<str:migration_id>", moves.ServerMigrationView.as_view()),
    # usage: per project, and the (never run) instance usage audit
    path("os-simple-tenant-usage", servers.TenantUsageListView.as_view()),
    path("os-simple-tenant-usage/<str:tenant_id>", servers.TenantUsageView.as_view()),
    path("os-instance_usage_audit_log", servers.AuditLogListView.as_view()),
    path("os-instance_usage_audit_log/<str:before>", servers.AuditLogView.as_view()),
    # quotas and limits
    path("os-quota-sets/<str:project_id>", quotas.QuotaSetView.as_view()),
    path("os-quota-sets/<str:project_id>/detail", quotas.QuotaSetDetailView.as_view()),
    path("os-quota-sets/<str:project_id>/defaults", quotas.QuotaSetDefaultsView.as_view()),
    path("os-quota-class-sets/<str:class_name>", quotas.QuotaClassSetView.as_view()),
    path("limits", quotas.LimitsView.as_view()),
    # scheduling explanations (Corral's own)
    path("os-scheduler-explain", scheduling.SchedulerExplainView.as_view()),
    path("os-scheduler-explain/servers/<str:server_id>", scheduling.ServerDecisionView.as_view()),
    path("os-scheduler-explain/<str:decision_id>", scheduling.SchedulingDecisionView.as_view()),
]

# Appended last by config.urls so that every other route wins.
catch_all = re_path(r"^.*$", UnknownRouteView.as_view())
