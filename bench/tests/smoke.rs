//! The benchmark suite's smoke run, so the benchmarks never rot: every group
//! at its smallest size, once, through the real binary. No timing is
//! asserted (timings are read from release runs, in BENCHMARKS.md); a group
//! that fails, or a table that goes missing, fails the test.

use std::process::Command;

#[test]
fn every_group_runs_at_its_smallest_size() {
    let out = Command::new(env!("CARGO_BIN_EXE_assets-bench"))
        .arg("--quick")
        .output()
        .expect("run assets-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for group in [
        "## Pipeline on a generated corpus",
        "## Remote cache",
        "## Atlas packing",
        "### Small sets, one page sized to them",
        "## One 2,000-sprite atlas",
        "## Hot reload latency",
        "## Parcels",
        "### Reading compressed resources",
        "## Image encodings",
        "## GPU textures",
        "## KTX2 supercompression",
    ] {
        assert!(stdout.contains(group), "no `{group}` table in:\n{stdout}");
    }
}
