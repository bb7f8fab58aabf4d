"""Node power models in platform TOML files: per group, over a top-level base, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.platform.files import load_platform_file


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "p.toml"
    p.write_text(text)
    return p


def test_group_values_override_the_top_level_model(tmp_path: Path) -> None:
    p = write(tmp_path, """
power_model = { idle = 50, off = 5, boot_time = 30.5 }
[[nodes]]
count = 2
capacity = { cores = 8, gpu = 2 }
power_model = { core_first = 30, core = 4, gpu = 60 }
[[nodes]]
count = 1
capacity = { cores = 8 }
""")
    plat = load_platform_file(p)
    t = plat.power_table
    assert t is not None
    assert t["idle"].tolist() == [50.0] * 3
    assert t["core_first"].tolist() == [30.0, 30.0, 95.74]
    assert t["gpu"].tolist() == [60.0, 60.0, 0.0]
    assert t["off"].tolist() == [5.0] * 3
    assert plat.boot_time.tolist() == [31] * 3  # rounded up to whole seconds
    assert plat.shutdown_time.tolist() == [7] * 3


def test_eurora_base_by_gpu_count(tmp_path: Path) -> None:
    p = write(tmp_path, """
power_model = "eurora"
[[nodes]]
count = 1
capacity = { cores = 16, gpu = 2 }
[[nodes]]
count = 1
capacity = { cores = 16, mic = 2 }
""")
    t = load_platform_file(p).power_table
    assert t is not None and t["idle"].tolist() == [64.0, 40.0]


def test_no_model_without_power_model(tmp_path: Path) -> None:
    p = write(tmp_path, "[[nodes]]\ncount = 2\ncapacity = { cores = 4 }\n")
    assert load_platform_file(p).power_table is None


@pytest.mark.parametrize(("text", "field"), [
    ('power_model = { idle = -1 }', "nodes[0].power_model.idle"),
    ('power_model = { idel = 3 }', "nodes[0].power_model.idel"),
    ('power_model = "fast"', "nodes[0].power_model"),
])
def test_bad_values_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    p = write(tmp_path, f"[[nodes]]\ncapacity = {{ cores = 4 }}\n{text}\n")
    with pytest.raises(ConfigError) as err:
        load_platform_file(p)
    assert field in str(err.value) and "p.toml" in str(err.value)
