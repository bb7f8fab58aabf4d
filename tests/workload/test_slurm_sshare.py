"""sshare --parsable2 exports: each user's raw usage, summed over their accounts; bad
files rejected naming the line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.slurm_sshare import read_sshare_usage

#: written by the local cluster's sshare --all --long --parsable2 (Slurm 22.05.8), with a
#: second user added to account beta by hand
REAL = """\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins
root|||0.000000|163||1.000000||||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0
 root|root|1|0.333333|0|0.000000|0.000000|1.000000|inf||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0
 alpha||1|0.333333|22|0.134969|0.134969||2.469697||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0
  alpha|root|1|1.000000|22|0.134969|1.000000|0.666667|1.000000||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0
 beta||1|0.333333|141|0.865031|0.865031||0.385345||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0
  beta|root|1|0.500000|120|0.736196|0.851064|0.333333|0.587500||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0
  beta|ana|1|0.500000|21.5|0.131902|0.148936|1.000000|3.357143||
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sshare.txt"
    path.write_text(text)
    return path


def test_users_get_the_sum_of_their_associations(tmp_path: Path) -> None:
    usage = read_sshare_usage(_write(tmp_path, REAL))
    assert usage == {"root": 0 + 22 + 120, "ana": 21.5}


def test_parsable_trailing_bars_and_column_order(tmp_path: Path) -> None:
    text = "RawUsage|User|Account|\n163|||\n5|bo| alpha|\n7|bo| beta|\n"
    assert read_sshare_usage(_write(tmp_path, text)) == {"bo": 12.0}


@pytest.mark.parametrize(("text", "where"), [
    ("Account|User|NormUsage\nalpha|bo|0.5\n", "sshare.txt:1, field 'RawUsage'"),
    ("Account|User|RawUsage\nalpha|bo|many\n", "sshare.txt:2, field 'RawUsage'"),
    ("Account|User|RawUsage\nalpha|bo|-3\n", "sshare.txt:2, field 'RawUsage'"),
    ("Account|User|RawUsage\nalpha|bo\n", "sshare.txt:2"),
    ("", "sshare.txt:1"),
])
def test_bad_exports_name_the_line_and_field(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(WorkloadError) as err:
        read_sshare_usage(_write(tmp_path, text))
    assert where in str(err.value)
