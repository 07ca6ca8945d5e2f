"""Nova's list of v2.1 extensions: a fixed list every caller reads at every
microversion; an unknown alias is a 404; unknown query parameters are
ignored up to 2.101 and refused from 2.102."""

from tests.helpers import fault


def test_every_caller_reads_nova_s_list(member_api, reader_api):
    for api in (member_api, reader_api):
        for version in ("2.1", "2.101", "2.104"):
            response = api.get("/extensions", version=version)
            assert response.status_code == 200, response.content
            extensions = response.json()["extensions"]
            assert len(extensions) == 99
            aliases = [e["alias"] for e in extensions]
            assert aliases[:3] == ["NMN", "OS-DCF", "OS-EXT-AZ"] and aliases[-1] == "os-volumes"
            assert "OS-EXT-VIF-NET" not in aliases  # only in Nova's legacy v2 mode
    body = member_api.get("/extensions/OS-EXT-IMG-SIZE", version="2.1").json()
    assert body == {
        "extension": {
            "alias": "OS-EXT-IMG-SIZE",
            "description": "Adds image size to image listings.",
            "links": [],
            "name": "ImageSize",
            "namespace": "http://docs.openstack.org/compute/ext/fake_xml",
            "updated": "2014-12-03T00:00:00Z",
        }
    }


def test_unknown_alias_and_query_parameters(member_api):
    message = fault(member_api.get("/extensions/os-nothing", version="2.1"), 404, "itemNotFound")
    assert message == "The resource could not be found."
    assert member_api.get("/extensions?foo=1", version="2.101").status_code == 200
    assert member_api.get("/extensions/NMN?foo=1", version="2.101").status_code == 200
    for path in ("/extensions?foo=1", "/extensions/NMN?foo=1"):
        message = fault(member_api.get(path, version="2.102"), 400, "badRequest")
        assert message.startswith("Invalid input for query parameters foo."), message
