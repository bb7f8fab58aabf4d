"""Platform files: TOML descriptions, Eurora node lists, presets, and every bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.platform.files import (
    load_eurora_nodes,
    load_platform_file,
    load_platform_toml,
    parse_eurora_nodes,
    platform_from_mapping,
)
from dispatchlab.platform.inline import parse_inline
from dispatchlab.platform.presets import DESCRIPTIONS, PRESETS
from dispatchlab.platform.quantities import parse_memory_mb
from dispatchlab.platform.resolve import resolve_platform
from tests.conftest import trace_path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "platforms"


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------- TOML


def test_eurora_example_equals_the_preset() -> None:
    from_file = load_platform_file(EXAMPLES / "eurora.toml")
    preset = PRESETS["eurora"]()
    assert from_file.resources == preset.resources
    assert np.array_equal(from_file.capacity, preset.capacity)
    assert from_file.node_names == preset.node_names
    assert {k: v.tolist() for k, v in from_file.groups.items()} == {
        k: v.tolist() for k, v in preset.groups.items()
    }
    assert from_file.name == "eurora"


def test_small_cluster_example_uses_every_field() -> None:
    plat = resolve_platform(str(EXAMPLES / "small-cluster.toml"))
    assert plat.name == "small-cluster"
    assert plat.resources == ("cores", "mem", "gpu")
    assert plat.n_nodes == 22
    assert plat.node_names[:2] == ("cpu00", "cpu01")
    assert plat.node_names[16:] == ("gpu0", "gpu1", "gpu2", "gpu3", "fat-a", "fat-b")
    assert plat.capacity[0].tolist() == [32, 128 * 1024, 0]
    assert plat.capacity[16].tolist() == [32, 256 * 1024, 4]
    assert plat.capacity[21].tolist() == [64, 1024 * 1024, 0]
    assert sorted(plat.groups) == ["batch", "cpu", "gpu", "reserved"]
    assert plat.groups["batch"].tolist() == list(range(20))
    assert plat.groups["reserved"].tolist() == [20, 21]
    assert plat.node_power is not None
    assert plat.node_power.tolist() == [350.0] * 16 + [1400.0] * 4 + [600.0] * 2


def test_defaults_and_resource_order(tmp_path: Path) -> None:
    plat = load_platform_toml(
        write(
            tmp_path,
            """
[[nodes]]
count = 3
capacity = { gpus = 1, memory = 2048, cores = 4 }

[[nodes]]
capacity = { cores = 8, fpga = 1 }
""",
        )
    )
    assert plat.name == "p"
    assert plat.resources == ("cores", "gpu", "mem", "fpga")
    assert plat.node_names == ("n0", "n1", "n2", "n3")
    assert plat.capacity.tolist() == [[4, 1, 2048, 0]] * 3 + [[8, 0, 0, 1]]
    assert plat.node_power is None
    assert plat.groups == {}


def test_declared_resource_order_and_platform_table(tmp_path: Path) -> None:
    doc = {"experiment": "x"}  # other keys of an experiment file sit beside [platform]
    doc_platform = {
        "name": "m",
        "resources": ["mem", "cores"],
        "nodes": [{"count": 2, "capacity": {"cores": 2, "mem": "1 GB"}}],
    }
    plat = platform_from_mapping({"platform": doc_platform}, source="exp.toml")
    assert plat.resources == ("mem", "cores")
    assert plat.capacity.tolist() == [[1024, 2], [1024, 2]]
    with pytest.raises(ConfigError, match="experiment"):
        platform_from_mapping(doc, source="exp.toml")


def test_memory_units() -> None:
    assert parse_memory_mb(512, field="m") == 512
    assert parse_memory_mb("16 GB", field="m") == 16384
    assert parse_memory_mb("16GiB", field="m") == 16384
    assert parse_memory_mb("2048 KB", field="m") == 2
    assert parse_memory_mb("1 TB", field="m") == 1024 * 1024
    assert parse_memory_mb("1.5 GB", field="m") == 1536
    assert parse_memory_mb("300", field="m") == 300


def test_inline_memory_units() -> None:
    plat = parse_inline("nodes=2,cores=8,mem=2GB,gpu=1")
    assert plat.capacity.tolist() == [[8, 2048, 1], [8, 2048, 1]]
    with pytest.raises(ConfigError, match="field 'mem'"):
        parse_inline("nodes=2,cores=8,mem=2 XB")


BAD_TOML = [
    ("[[nodes]\ncount = 1", None, "not valid TOML"),
    ("name = 'x'", "nodes", "missing"),
    ("nodes = 3", "nodes", "non-empty array"),
    ("nodes = []", "nodes", "non-empty array"),
    ("colour = 'red'\n[[nodes]]\ncapacity = {cores = 1}", "colour", "unknown key"),
    ("name = 3\n[[nodes]]\ncapacity = {cores = 1}", "name", "non-empty string"),
    ("description = 3\n[[nodes]]\ncapacity = {cores = 1}", "description", "string"),
    ("[[nodes]]\ncores = 16", "nodes[0].cores", "capacity = {"),
    ("[[nodes]]\ncount = -1\ncapacity = {cores = 1}", "nodes[0].count", "non-negative"),
    ("[[nodes]]\ncount = 1.5\ncapacity = {cores = 1}", "nodes[0].count", "non-negative"),
    ("[[nodes]]\ncount = true\ncapacity = {cores = 1}", "nodes[0].count", "non-negative"),
    ("[[nodes]]\ncount = 2", "nodes[0].capacity", "missing"),
    ("[[nodes]]\ncapacity = {}", "nodes[0].capacity", "non-empty table"),
    ("[[nodes]]\ncapacity = 4", "nodes[0].capacity", "non-empty table"),
    ("[[nodes]]\ncapacity = {cores = -4}", "nodes[0].capacity.cores", "negative"),
    ("[[nodes]]\ncapacity = {cores = 4.5}", "nodes[0].capacity.cores", "integer"),
    ("[[nodes]]\ncapacity = {cores = '4'}", "nodes[0].capacity.cores", "integer"),
    ("[[nodes]]\ncapacity = {cores = true}", "nodes[0].capacity.cores", "integer"),
    (
        "[[nodes]]\ncapacity = {cores = 4, gpu = 1, gpus = 2}",
        "nodes[0].capacity.gpus",
        "given twice",
    ),
    (
        "[[nodes]]\ncapacity = {cores = 4, mem = '16 XB'}",
        "nodes[0].capacity.mem",
        "not an amount of memory",
    ),
    (
        "[[nodes]]\ncapacity = {cores = 4, mem = '1.5 KB'}",
        "nodes[0].capacity.mem",
        "whole number of MB",
    ),
    ("[[nodes]]\ncapacity = {cores = 4, mem = -3}", "nodes[0].capacity.mem", "negative"),
    ("[[nodes]]\ncapacity = {cores = 4, mem = 1.5}", "nodes[0].capacity.mem", "integer"),
    (
        "[[nodes]]\ncount = 2\nnames = ['a']\ncapacity = {cores = 1}",
        "nodes[0].names",
        "1 names for count = 2",
    ),
    (
        "[[nodes]]\nnames = ['a']\nname_prefix = 'x'\ncapacity = {cores = 1}",
        "nodes[0].names",
        "not both",
    ),
    ("[[nodes]]\nnames = [1]\ncapacity = {cores = 1}", "nodes[0].names", "strings"),
    (
        "[[nodes]]\nname_prefix = ''\ncapacity = {cores = 1}",
        "nodes[0].name_prefix",
        "non-empty string",
    ),
    ("[[nodes]]\ngroup = 3\ncapacity = {cores = 1}", "nodes[0].group", "label"),
    ("[[nodes]]\npower = -1\ncapacity = {cores = 1}", "nodes[0].power", "non-negative"),
    ("[[nodes]]\npower = 'hot'\ncapacity = {cores = 1}", "nodes[0].power", "non-negative"),
    (
        "[[nodes]]\npower = 100\ncapacity = {cores = 1}\n[[nodes]]\ncapacity = {cores = 1}",
        "nodes[1].power",
        "all groups or none",
    ),
    ("resources = ['mem']\n[[nodes]]\ncapacity = {mem = 1}", "resources", "'cores'"),
    ("resources = ['cores', 'cores']\n[[nodes]]\ncapacity = {cores = 1}", "resources", "duplicate"),
    ("resources = 'cores'\n[[nodes]]\ncapacity = {cores = 1}", "resources", "list"),
    (
        "resources = ['cores']\n[[nodes]]\ncapacity = {cores = 1, gpu = 1}",
        "nodes[0].capacity.gpu",
        "not in resources",
    ),
    ("[[nodes]]\ncapacity = {gpu = 1}", "nodes[0].capacity.cores", "needs cores"),
    ("[[nodes]]\ncount = 0\ncapacity = {cores = 1}", "nodes", "no nodes"),
    (
        "[[nodes]]\nnames = ['a']\ncapacity = {cores = 1}\n[[nodes]]\nnames = ['a']\n"
        "capacity = {cores = 1}",
        "nodes[1].names",
        "node name 'a'",
    ),
    (
        "[[nodes]]\ncount = 2\ncapacity = {cores = 1}\n[[nodes]]\nnames = ['n1']\n"
        "capacity = {cores = 1}",
        "nodes[1].names",
        "node name 'n1'",
    ),
    ("nodes = [1]", "nodes[0]", "must be a table"),
]


@pytest.mark.parametrize(("text", "field", "message"), BAD_TOML)
def test_bad_toml_names_file_and_field(
    tmp_path: Path, text: str, field: str | None, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_platform_file(path)
    err = info.value
    assert message in str(err)
    assert err.source == str(path)
    assert str(path) in str(err)
    if field is not None:
        assert err.field == field
        assert f"field '{field}'" in str(err)


def test_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_platform_file(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="is a folder"):
        load_platform_file(tmp_path)
    with pytest.raises(ConfigError, match="file not found"):
        load_platform_toml(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="file not found"):
        load_eurora_nodes(tmp_path / "nodes")


# ----------------------------------------------------------------------- Eurora lists


def test_eurora_node_list_by_content(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# id cores gpus mics mem_kb reserved\n"
        "0 16 0 2 33554432 0\n1 16 2 0 16777216 0  \n\n"
        "7 16 2 0 33554432 1\n",
        name="nodes_#3",
    )
    plat = load_platform_file(path)
    assert plat.resources == ("cores", "mem", "gpu", "mic")
    assert plat.capacity.tolist() == [[16, 32768, 0, 2], [16, 16384, 2, 0], [16, 32768, 2, 0]]
    assert plat.node_names == ("node00", "node01", "node07")
    assert plat.groups["reserved"].tolist() == [2]
    assert plat.groups["gpu"].tolist() == [1, 2]
    assert plat.groups["mic"].tolist() == [0]
    assert plat.name == "nodes_#3"


def test_eurora_memory_unit_option() -> None:
    plat = parse_eurora_nodes("0 1 0 0 2097152 0", mem_unit="bytes")
    assert plat.capacity.tolist() == [[1, 2, 0, 0]]
    plat = parse_eurora_nodes("0 1 0 0 2048 0", mem_unit="mb")
    assert plat.capacity.tolist() == [[1, 2048, 0, 0]]
    with pytest.raises(ConfigError, match="mem_unit"):
        parse_eurora_nodes("0 1 0 0 2048 0", mem_unit="gb")  # type: ignore[arg-type]


BAD_NODES = [
    ("0 16 0 2 33554432", None, "expected 6 columns"),
    ("0 16 0 2 33554432 0 1", None, "expected 6 columns"),
    ("0 16 x 2 33554432 0", "gpus", "not an integer"),
    ("0 -16 0 2 33554432 0", "cores", "negative"),
    ("0 16 0 2 33554432 2", "reserved", "0 or 1"),
    ("0 16 0 2 33554432 0\n0 16 0 2 33554432 0", "node_id", "already given on line 1"),
    ("0 16 0 2 1000 0", "memory", "whole number of MB"),
    ("0 0 0 0 0 0\n1 0 0 0 0 0", None, None),
]


@pytest.mark.parametrize(("text", "field", "message"), BAD_NODES)
def test_bad_node_list_names_line(
    tmp_path: Path, text: str, field: str | None, message: str | None
) -> None:
    path = write(tmp_path, text, name="nodes_#x")
    plat_or_err: object
    try:
        plat_or_err = load_platform_file(path)
    except ConfigError as err:
        plat_or_err = err
    if message is None:  # all-zero nodes are a valid (useless) platform
        assert not isinstance(plat_or_err, ConfigError)
        return
    assert isinstance(plat_or_err, ConfigError)
    assert message in str(plat_or_err)
    bad_line = 2 if "already given" in message else 1
    assert plat_or_err.source == f"{path}:{bad_line}"
    if field is not None:
        assert plat_or_err.field == field


def test_empty_node_list(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no nodes"):
        load_eurora_nodes(write(tmp_path, "# nothing\n", name="nodes_#0"))


def test_toml_extension_is_never_sniffed_as_node_list(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_platform_file(write(tmp_path, "0 16 0 2 33554432 0\n", name="nodes.toml"))


def test_neither_format(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_platform_file(write(tmp_path, "hello world\n", name="machine.txt"))


# ---------------------------------------------------------------------------- presets


@pytest.mark.parametrize(
    ("preset", "nodes", "cores", "accel"),
    [
        ("eurora-8", 8, 16, 2),
        ("eurora-8-big", 8, 128, 16),
        ("eurora-32", 32, 16, 2),
        ("eurora-64", 64, 16, 2),
    ],
)
def test_eurora_list_presets(preset: str, nodes: int, cores: int, accel: int) -> None:
    plat = resolve_platform(preset)
    assert plat.name == preset
    assert plat.n_nodes == nodes
    assert set(plat.capacity[:, 0].tolist()) == {cores}
    assert set(plat.capacity[:, 1].tolist()) == {32 * 1024}
    half = nodes // 2
    assert plat.groups["mic"].tolist() == list(range(half))
    assert plat.groups["gpu"].tolist() == list(range(half, nodes))
    assert set(plat.capacity[:half, 3].tolist()) == {accel}
    assert set(plat.capacity[half:, 2].tolist()) == {accel}
    assert "reserved" not in plat.groups
    assert preset in DESCRIPTIONS


@pytest.mark.parametrize(
    ("preset", "shared_name"),
    [
        ("eurora-8", "nodes_#8"),
        ("eurora-8-big", "nodes_#8_big"),
        ("eurora-32", "nodes_#32"),
        ("eurora-64", "nodes_#64"),
    ],
)
def test_presets_match_shared_node_lists(preset: str, shared_name: str) -> None:
    path = trace_path(f"eurora-system/{shared_name}")
    from_shared = resolve_platform(str(path))
    shipped = resolve_platform(preset)
    assert np.array_equal(from_shared.capacity, shipped.capacity)
    assert from_shared.node_names == shipped.node_names


def test_every_preset_has_a_description() -> None:
    assert set(PRESETS) == set(DESCRIPTIONS)
    for factory in PRESETS.values():
        assert factory().n_nodes > 0
