"""Console forms. Values are checked by the compute API's own JSON-schema
rules (aggregates.api.validation), so the console and the API refuse the
same input with the same message; the service functions then apply the
rules that span rows."""
import re

from django import forms

from aggregates.api import validation
from aggregates.api.flavors import create_schema as flavor_create_schema
from aggregates.api.errors import ApiError

HOST_SEPARATORS = re.compile(r"[\s,]+")
# The flavor fields of the compute API at the newest microversion that still takes every one of them.
FLAVOR_API_FIELDS = flavor_create_schema((2, 101))["properties"]["flavor"]["properties"]


def api_rule_error(field_name, value, schema):
    """The API's message for ``value`` under ``schema``, or None when it passes."""
    try:
        validation.validate({field_name: value}, {"type": "object", "properties": {field_name: schema}})
    except ApiError as exc:
        return exc.message
    return None


class ApiCheckedForm(forms.Form):
    """A form whose fields named in ``api_rules`` are checked by the API's schemas."""

    api_rules = {}

    def clean(self):
        cleaned = super().clean()
        for name, schema in self.api_rules.items():
            value = cleaned.get(name)
            if value in (None, "") and not self.fields[name].required:
                continue
            if name in cleaned:
                message = api_rule_error(name, value, schema)
                if message:
                    self.add_error(name, message)
        return cleaned


def text_field(label, required=True, help_text="", max_length=None):
    # No stripping: the API's rules decide about leading and trailing spaces.
    return forms.CharField(label=label, required=required, help_text=help_text, strip=False,
                           max_length=max_length, widget=forms.TextInput(attrs={"autocomplete": "off"}))


class AggregateForm(ApiCheckedForm):
    name = text_field("Name")
    availability_zone = text_field(
        "Availability zone", required=False,
        help_text="Leave empty for an aggregate that names no zone: its hosts stay in the default zone "
                  "unless another aggregate places them.")
    api_rules = {"name": validation.name, "availability_zone": validation.az_name}


class AggregateCreateForm(AggregateForm):
    hosts = forms.CharField(
        label="Hosts", required=False, strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "node1, node2"}),
        help_text="Registered compute host names, separated by commas, spaces or new lines. "
                  "The aggregate is created with all of them or not at all.")

    def clean_hosts(self):
        names = [name for name in HOST_SEPARATORS.split(self.cleaned_data["hosts"]) if name]
        for name in names:
            message = api_rule_error("host", name, validation.hostname)
            if message:
                raise forms.ValidationError(message)
        return list(dict.fromkeys(names))


class AggregateEditForm(AggregateForm):
    api_rules = {"name": validation.name_with_spaces, "availability_zone": validation.az_name}


class MetadataRowForm(forms.Form):
    key = text_field("Key", required=False)
    value = text_field("Value", required=False)
    remove = forms.BooleanField(label="Unset", required=False)

    def clean(self):
        cleaned = super().clean()
        key, value = cleaned.get("key", ""), cleaned.get("value", "")
        if not key:
            if value:
                self.add_error("key", "A value needs a key.")
            return cleaned
        message = api_rule_error("key", key, validation.metadata_key)
        if message:
            self.add_error("key", message)
        if not cleaned.get("remove"):
            message = api_rule_error("value", value, {"type": "string", "maxLength": 255})
            if message:
                self.add_error("value", message)
            elif key == "availability_zone":
                message = api_rule_error("availability_zone", value, validation.az_name)
                if message:
                    self.add_error("value", message)
        return cleaned


class BaseMetadataFormSet(forms.BaseFormSet):
    def clean(self):
        if any(self.errors):
            return
        seen = set()
        for form in self.forms:
            key = form.cleaned_data.get("key")
            if key and key in seen:
                form.add_error("key", f"Key {key} appears twice.")
            seen.add(key)

    def changes(self):
        """The set_metadata argument: key -> value, or None to unset."""
        return {
            form.cleaned_data["key"]: None if form.cleaned_data.get("remove") else form.cleaned_data["value"]
            for form in self.forms
            if form.cleaned_data.get("key")
        }


MetadataFormSet = forms.formset_factory(MetadataRowForm, formset=BaseMetadataFormSet, extra=3)


class HostsForm(forms.Form):
    """Hosts picked to join an aggregate (checked against the API's host name rule)."""

    hosts = forms.MultipleChoiceField(label="Hosts", required=True, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, host_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["hosts"].choices = [(name, name) for name in host_choices]


class RemoveHostForm(forms.Form):
    host = forms.CharField(max_length=255)


class DisableHostForm(ApiCheckedForm):
    disabled_reason = text_field("Reason", required=False,
                                 help_text="Shown to other operators, e.g. “Replacing a failed DIMM”.")
    api_rules = {"disabled_reason": {"type": "string", "minLength": 1, "maxLength": 255}}


def size_field(label, minimum, initial=None, help_text=""):
    return forms.CharField(label=label, initial=initial, help_text=help_text, required=initial is None,
                           widget=forms.TextInput(attrs={"inputmode": "numeric", "size": 8}))


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
    is_public = forms.BooleanField(label="Public", required=False, initial=True,
                                   help_text="A private flavor starts with an empty access list.")
    description = forms.CharField(label="Description", required=False, strip=False,
                                  widget=forms.TextInput(attrs={"autocomplete": "off"}))

    api_rules = {name: FLAVOR_API_FIELDS[api_name] for name, api_name in (
        ("name", "name"), ("id", "id"), ("ram", "ram"), ("vcpus", "vcpus"), ("disk", "disk"),
        ("ephemeral", "OS-FLV-EXT-DATA:ephemeral"), ("swap", "swap"), ("description", "description"))}


class ExtraSpecForm(forms.Form):
    key = text_field("Key", help_text="e.g. aggregate_instance_extra_specs:ssd, hw:cpu_policy, trait:HW_CPU_X86_AVX2")
    value = text_field("Value", required=False)

    def clean(self):
        cleaned = super().clean()
        key = cleaned.get("key")
        if key is not None:
            message = api_rule_error(key, cleaned.get("value", ""), {"type": "string", "maxLength": 255})
            key_message = api_rule_error("key", key, {"type": "string", "pattern": r"^[a-zA-Z0-9-_:. ]{1,255}$"})
            if key_message:
                self.add_error("key", key_message)
            elif message:
                self.add_error("value", message)
        return cleaned
