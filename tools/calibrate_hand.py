"""calibrate_hand.py - the constants still set by hand against a published
figure, not refitted by tools/calibrate.py: HAND_SET names each (what,
where, against which figure, which rows), so that docs/VALIDATION.md
(tools/validate.py) lists them and their rows stay calibration."""
from dataclasses import dataclass


@dataclass
class HandSet:
    """A constant set by hand against a published figure: not refitted
    here; its rows are calibration."""
    what: str
    where: str
    against: str
    rows: str


HAND_SET = [
    HandSet(
        what="the HBM's energy, pj_per_byte 32 (memory power = it x the "
             "bandwidth in use)",
        where="scenarios/catalog/gpus.yaml (power_model)",
        against="O'Connor et al., 'Fine-Grained DRAM', MICRO 2017: 3.97 pJ "
                "a bit for an HBM2 access with its I/O",
        rows="none (no row compares an energy per byte)"),
    HandSet(
        what="training phase activities: act_comm 50%, act_idle 25%, "
             "comm_share 10% (act_compute follows the MFU through the GPU "
             "power model)",
        where="models/work/training_scn.c",
        against="Latif et al. (8.4 kW node peak), Newkirk et al. (76% of "
                "10.2 kW)",
        rows="H100 training: *"),
    HandSet(
        what="memory knee 50% (memory-bound speed and power fall below "
             "it) for the GPU types without a measured HBM / L2 bandwidth "
             "(H100, H200, B200, GB200 take theirs: gpus.yaml)",
        where="models/hardware/gpu.c (memory_knee)",
        against="an estimate below the clock of Splitwise's power-capped "
                "profile (decode unchanged at 70% power)",
        rows="Power-capped DGX-H100: decode step, capped / uncapped"),
    HandSet(
        what="trt-llm's eff_bw, act_fixed, moe_layer_overhead and "
             "step_overhead: copies of vllm's fitted figures",
        where="scenarios/catalog/engines.yaml",
        against="nothing of MLPerf's (the fit set cannot tell them apart)",
        rows="MLPerf v4.0 Llama 2 70B server: *"),
    HandSet(
        what="per-GPU MTBF of the Llama 3 job: 54 d x 24 h x 16,384 / 419",
        where="tests/work/test_training.c",
        against="Llama 3's 419 interruptions in 54 days",
        rows="Llama 3 interruptions in 54 days, seed *"),
    HandSet(
        what="the Ampere entries' power curve: the Zeus A40's medians",
        where="scenarios/catalog/gpus.yaml (tools/power_fit.py zeus)",
        against="Zeus's A40 power-limit runs "
                "(data/gpu_power/summary_power_a40.csv)",
        rows="none"),
    HandSet(
        what="the V100 power curve of the Zeus rows",
        where="tests/hardware/test_gpu.c",
        against="Zeus's resnet50 batch 128 runs "
                "(data/gpu_power/summary_power_v100.csv)",
        rows="none: the rows are the other workloads, held out"),
    HandSet(
        what="UPS losses: 1% no-load, 2% proportional, 1% square-law",
        where="models/facility/electrical.c",
        against="quoted UPS efficiencies, 94-97% from 25% to full load "
                "(APC/Schneider)",
        rows="none (the PUE rows are the issues' bars)"),
]
