"""Console forms. Values are checked by the same JSON-schema rules as the
compute API's (aggregates.schema_check with the shared value schemas of
aggregates.value_schemas and the domains' schemas modules), so the console
and the API refuse the same input with the same message; the service
functions then apply the rules that span rows."""

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib.auth.forms import AuthenticationForm

from aggregates import schema_check, value_schemas
from aggregates.addressing.schemas import POOL_CREATE
from aggregates.errors import Invalid
from aggregates.flavors.schemas import flavor_properties
from aggregates.host_aggregates.schemas import SET_METADATA
from aggregates.hosts.schemas import DISABLED_REASON
from aggregates.identity import services as identity
from aggregates.identity import throttle
from aggregates.identity.models import Project

if TYPE_CHECKING:
    # django-stubs makes formsets generic in their form; Django's own class
    # cannot be subscripted at run time.
    MetadataFormSetBase = forms.BaseFormSet["MetadataRowForm"]
else:
    MetadataFormSetBase = forms.BaseFormSet

HOST_SEPARATORS = re.compile(r"[\s,]+")
# The flavor fields of the compute API at the newest microversion that still takes every one of them.
FLAVOR_API_FIELDS = flavor_properties((2, 101))
POOL_FIELDS = POOL_CREATE["properties"]["address_pool"]["properties"]


def choice_field(form: forms.BaseForm, name: str) -> forms.ChoiceField:
    """The form's choice field ``name`` (a form's fields are typed as plain
    Fields), to set its choices."""
    return cast(forms.ChoiceField, form.fields[name])


def api_rule_error(field_name: str, value: object, schema: Mapping[str, Any]) -> str | None:
    """The API's message for ``value`` under ``schema``, or None when it passes."""
    try:
        schema_check.check_field(field_name, value, schema)
    except Invalid as exc:
        return exc.message
    return None


class ApiCheckedForm(forms.Form):
    """A form whose fields named in ``api_rules`` are checked by the API's schemas."""

    api_rules: Mapping[str, Mapping[str, Any]] = {}

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # a Form's clean returns its cleaned_data
        for name, schema in self.api_rules.items():
            value = cleaned.get(name)
            if value in (None, "") and not self.fields[name].required:
                continue
            if name in cleaned:
                message = api_rule_error(name, value, schema)
                if message:
                    self.add_error(name, message)
        return cleaned


def text_field(
    label: str, required: bool = True, help_text: str = "", max_length: int | None = None
) -> forms.CharField:
    # No stripping: the API's rules decide about leading and trailing spaces.
    return forms.CharField(
        label=label,
        required=required,
        help_text=help_text,
        strip=False,
        max_length=max_length,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )


class AggregateForm(ApiCheckedForm):
    name = text_field("Name")
    availability_zone = text_field(
        "Availability zone",
        required=False,
        help_text="Leave empty for an aggregate that names no zone: its hosts stay in the default zone "
        "unless another aggregate places them.",
    )
    api_rules = {"name": value_schemas.name, "availability_zone": value_schemas.az_name}


class AggregateCreateForm(AggregateForm):
    hosts = forms.CharField(
        label="Hosts",
        required=False,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "node1, node2"}),
        help_text="Registered compute host names, separated by commas, spaces or new lines. "
        "The aggregate is created with all of them or not at all.",
    )

    metadata = forms.CharField(
        label="Metadata",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "ssd=true\nfilter_tenant_id=…"}),
        help_text="One key=value a line; blank lines are ignored. Checked by the compute API's metadata rules.",
    )

    def clean_hosts(self) -> list[str]:
        names = [name for name in HOST_SEPARATORS.split(self.cleaned_data["hosts"]) if name]
        for name in names:
            message = api_rule_error("host", name, value_schemas.hostname)
            if message:
                raise forms.ValidationError(message)
        return list(dict.fromkeys(names))

    def clean_metadata(self) -> dict[str, str]:
        return parse_metadata_lines(self.cleaned_data["metadata"])


def parse_metadata_lines(text: str) -> dict[str, str]:
    """``key=value`` lines -> a metadata dict, each line checked by the API's
    set_metadata schema (and a zone by its zone rule); an error names the line."""
    metadata: dict[str, str] = {}
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        shown = line if len(line) <= 60 else line[:60] + "…"
        if "=" not in line:
            errors.append(f"Line {number} ({shown}): write it as key=value.")
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        if key == "availability_zone":
            errors.append(f"Line {number} ({shown}): set the zone in the Availability zone field, not as metadata.")
            continue
        if key in metadata:
            errors.append(f"Line {number} ({shown}): key {key} appears twice.")
            continue
        try:
            schema_check.check({"metadata": {key: value}}, SET_METADATA)
        except Invalid as exc:
            errors.append(f"Line {number} ({shown}): {exc.message}")
            continue
        metadata[key] = value
    if errors:
        raise forms.ValidationError(errors)
    return metadata


class AggregateEditForm(AggregateForm):
    api_rules = {"name": value_schemas.name_with_spaces, "availability_zone": value_schemas.az_name}


class MetadataRowForm(forms.Form):
    key = text_field("Key", required=False)
    value = text_field("Value", required=False)
    remove = forms.BooleanField(label="Unset", required=False)

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # a Form's clean returns its cleaned_data
        key, value = cleaned.get("key", ""), cleaned.get("value", "")
        if not key:
            if value:
                self.add_error("key", "A value needs a key.")
            return cleaned
        message = api_rule_error("key", key, value_schemas.metadata_key)
        if message:
            self.add_error("key", message)
        if not cleaned.get("remove"):
            message = api_rule_error("value", value, {"type": "string", "maxLength": 255})
            if message:
                self.add_error("value", message)
            elif key == "availability_zone":
                message = api_rule_error("availability_zone", value, value_schemas.az_name)
                if message:
                    self.add_error("value", message)
        return cleaned


class BaseMetadataFormSet(MetadataFormSetBase):
    def clean(self) -> None:
        if any(self.errors):
            return
        seen: set[str | None] = set()
        for form in self.forms:
            key = form.cleaned_data.get("key")
            if key and key in seen:
                form.add_error("key", f"Key {key} appears twice.")
            seen.add(key)

    def changes(self) -> dict[str, str | None]:
        """The set_metadata argument: key -> value, or None to unset."""
        return {
            form.cleaned_data["key"]: None if form.cleaned_data.get("remove") else form.cleaned_data["value"]
            for form in self.forms
            if form.cleaned_data.get("key")
        }


# (formset_factory returns a subclass of ``formset``; its stubs say only BaseFormSet)
MetadataFormSet = cast(
    type[BaseMetadataFormSet], forms.formset_factory(MetadataRowForm, formset=BaseMetadataFormSet, extra=3)
)


class HostsForm(forms.Form):
    """Hosts picked to join an aggregate (checked against the API's host name rule)."""

    hosts = forms.MultipleChoiceField(label="Hosts", required=True, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args: Any, host_choices: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "hosts").choices = [(name, name) for name in host_choices]


class RemoveHostForm(forms.Form):
    host = forms.CharField(max_length=255)


class FlavorAccessForm(forms.Form):
    project = text_field("Project", help_text="A project's name or id.", max_length=255)

    def clean_project(self) -> Project:
        """The id of the project named (by id first, then by name)."""
        ref = self.cleaned_data["project"].strip()
        project = identity.get_project(ref) or next(iter(identity.list_projects(name=ref)), None)
        if project is None:
            raise forms.ValidationError(f"No project is named {ref} or has that id.")
        return project


class DisableHostForm(ApiCheckedForm):
    disabled_reason = text_field(
        "Reason", required=False, help_text="Shown to other operators, e.g. “Replacing a failed DIMM”."
    )
    api_rules = {"disabled_reason": DISABLED_REASON}


def size_field(label: str, minimum: int, initial: str | None = None, help_text: str = "") -> forms.CharField:
    return forms.CharField(
        label=label,
        initial=initial,
        help_text=help_text,
        required=initial is None,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "size": 8}),
    )


class FlavorForm(ApiCheckedForm):
    """Fields named as in the compute API; the API's schema checks them and
    the flavor service then applies the same rules as for an API call."""

    name = text_field("Name")
    id = text_field("Flavor ID", required=False, help_text="Leave empty for a generated UUID.")
    ram = size_field("RAM (MiB)", 1)
    vcpus = size_field("vCPUs", 1)
    disk = size_field("Root disk (GiB)", 0)
    ephemeral = size_field("Ephemeral disk (GiB)", 0, initial="0")
    swap = size_field("Swap (MiB)", 0, initial="0")
    is_public = forms.BooleanField(
        label="Public", required=False, initial=True, help_text="A private flavor starts with an empty access list."
    )
    description = forms.CharField(
        label="Description", required=False, strip=False, widget=forms.TextInput(attrs={"autocomplete": "off"})
    )

    api_rules = {
        name: FLAVOR_API_FIELDS[api_name]
        for name, api_name in (
            ("name", "name"),
            ("id", "id"),
            ("ram", "ram"),
            ("vcpus", "vcpus"),
            ("disk", "disk"),
            ("ephemeral", "OS-FLV-EXT-DATA:ephemeral"),
            ("swap", "swap"),
            ("description", "description"),
        )
    }


class ExtraSpecForm(forms.Form):
    key = text_field("Key", help_text="e.g. aggregate_instance_extra_specs:ssd, hw:cpu_policy, trait:HW_CPU_X86_AVX2")
    value = text_field("Value", required=False)

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # a Form's clean returns its cleaned_data
        key = cleaned.get("key")
        if key is not None:
            message = api_rule_error(key, cleaned.get("value", ""), {"type": "string", "maxLength": 255})
            key_message = api_rule_error("key", key, {"type": "string", "pattern": r"^[a-zA-Z0-9-_:. ]{1,255}$"})
            if key_message:
                self.add_error("key", key_message)
            elif message:
                self.add_error("value", message)
        return cleaned


class ThrottledLoginForm(AuthenticationForm):
    """The console's login form, under the same throttle as the Keystone
    surface: past the limit of failed attempts for the user name or the
    source address, the password is not even checked."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        address = self.request.META.get("REMOTE_ADDR") if self.request else None
        if username:
            try:
                throttle.check(username, address, getattr(self.request, "request_id", ""), surface="console")
            except throttle.Throttled as exc:
                raise forms.ValidationError(exc.message, code="throttled")
        try:
            return super().clean()
        except forms.ValidationError as exc:
            if getattr(exc, "code", None) == "invalid_login":
                throttle.record_failure(username, address)
            raise


class AddressPoolForm(ApiCheckedForm):
    """An address pool, its fields named and checked as in /os-address-pools;
    the addressing service then applies the rules that span rows (overlaps,
    pools in use)."""

    name = text_field("Name")
    cidr = text_field("CIDR", help_text="e.g. 10.0.0.0/24; the network and broadcast addresses are never given.")
    gateway = text_field("Gateway", required=False, help_text="Inside the CIDR; never given to a server.")
    kind = forms.ChoiceField(
        label="Kind",
        choices=[("internal", "internal (fixed addresses)"), ("external", "external (floating addresses)")],
    )
    scope = forms.ChoiceField(
        label="Serves",
        choices=[("global", "every host"), ("zone", "the hosts of one zone"), ("aggregate", "one aggregate's hosts")],
    )
    zone = text_field("Zone", required=False, help_text="With “the hosts of one zone”.")
    aggregate = forms.ChoiceField(label="Aggregate", required=False, help_text="With “one aggregate's hosts”.")

    api_rules = {name: POOL_FIELDS[name] for name in ("name", "cidr", "gateway", "kind", "scope", "zone", "aggregate")}

    def __init__(self, *args: Any, aggregates: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "aggregate").choices = [("", "—")] + [(name, name) for name in aggregates]
