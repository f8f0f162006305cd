// Fuzz target "config": random and mutated TOML through the config front end
// (cli::parseConfig, then Model::finalise for what it accepts: every check short of generating
// and compiling code). Only ModelError (ConfigError included) may come out; anything else, a
// crash or a hang is a finding.
//
//   fuzz_config --inputs 1000000 --seed 1 [SEED_FILES_OR_DIRS...]
// Without seed arguments the seeds are examples/*.toml and tests/hostile/cases/*.toml of the
// source tree this driver was built from, plus a small built-in config.
#include "fuzz_common.hpp"

#include "config.hpp"

#include <iostream>

using namespace spikeforge;

namespace {

const char* const builtinSeed = R"(# a small valid config
[model]
name = "seed"
dt = 0.1
precision = "double"
batch = 2
seed = 7
duration_ms = 10.0
[parameters]
N = 8
p = "0.5 / 2"
[neuron_models.Lif2]
params = ["tau", "Vt"]
vars = [{ name = "v", type = "scalar" }, { name = "n", type = "int", access = "ReadWrite" }]
sim_code = """
v += dt * (Isyn - v) / tau;
"""
threshold_condition_code = "v > Vt"
reset_code = "v = 0.0; n++;"
[[populations]]
name = "E"
size = "N"
model = "Lif2"
params = { tau = 10.0, Vt = 1.0 }
vars = { v = { init = "Uniform", min = 0.0, max = 1.0 }, n = 0 }
record_spikes = false
[[populations]]
name = "S"
size = 4
model = "Poisson"
params = { rate = 20.0 }
vars = { timeStepToSpike = 0.0 }
[[projections]]
name = "SE"
source = "S"
target = "E"
matrix = "sparse"
delay_steps = 2
connectivity = { init = "FixedProbability", prob = "p" }
weight_update = { model = "StaticPulse", vars = { g = { init = "Normal", mean = 0.5, sd = 0.1 } } }
postsynaptic = { model = "ExpCurr", params = { tau = 5.0 } }
[[current_sources]]
name = "Drive"
target = "E"
model = "DC"
params = { amp = 0.1 }
)";

const std::vector<std::string> dictionary = {
    "[model]\n",
    "[parameters]\n",
    "[[populations]]\n",
    "[[projections]]\n",
    "[[current_sources]]\n",
    "[neuron_models.X]\n",
    "[postsynaptic_models.X]\n",
    "[weight_update_models.X]\n",
    "[current_source_models.X]\n",
    "[populations.params]\n",
    "name = ",
    "dt = ",
    "size = ",
    "model = ",
    "params = ",
    "vars = ",
    "batch = ",
    "seed = ",
    "precision = ",
    "duration_ms = ",
    "record_spikes = ",
    "source = ",
    "target = ",
    "matrix = ",
    "delay_steps = ",
    "max_dendritic_delay_steps = ",
    "connectivity = ",
    "weight_update = ",
    "postsynaptic = ",
    "spike_times = ",
    "spike_times_file = ",
    "sim_code = ",
    "reset_code = ",
    "threshold_condition_code = ",
    "injection_code = ",
    "pre_spike_syn_code = ",
    "pre_vars = ",
    "post_vars = ",
    "access = ",
    "type = ",
    "init = ",
    "\"LIF\"",
    "\"Poisson\"",
    "\"SpikeSourceArray\"",
    "\"Izhikevich\"",
    "\"LeakyIntegrate\"",
    "\"StaticPulse\"",
    "\"STDPNearest\"",
    "\"DeltaCurr\"",
    "\"ExpCond\"",
    "\"DC\"",
    "\"Uniform\"",
    "\"Normal\"",
    "\"NormalClipped\"",
    "\"Binomial\"",
    "\"Gamma\"",
    "\"Exponential\"",
    "\"OneToOne\"",
    "\"FixedProbability\"",
    "\"FixedNumberTotalWithReplacement\"",
    "\"sparse\"",
    "\"dense\"",
    "\"ReadOnly\"",
    "\"uint8_t\"",
    "\"double\"",
    "\"N * p\"",
    "\"(N\"",
    "\"1/0\"",
    "\"1e308*10\"",
    "=",
    "\"",
    "'",
    "\"\"\"",
    "'''",
    "{",
    "}",
    "[",
    "]",
    "[[",
    "]]",
    ",",
    ".",
    "#",
    "\n",
    "\r\n",
    " ",
    "\t",
    "\\",
    "\\u0000",
    "\\n",
    "true",
    "false",
    "nan",
    "inf",
    "-inf",
    "+0.0",
    "0x10",
    "0o7",
    "0b1",
    "1_000",
    "1e400",
    "99999999999999999999",
    "4294967296",
    "-1",
    "1979-05-27T07:32:00Z",
    "07:32:00",
    "%:define",
    "?\?=",
    "(&V)[0]",
    "(id) += 1;",
    "\xef\xbb\xbf",
    "\xff",
    std::string(1, '\0'),
};

} // namespace

int main(int argc, char** argv) {
    fuzz::Options options = fuzz::parseOptions(
        argc, argv, "config",
        "Feeds random and mutated TOML to the config loader (parseConfig + Model::finalise).");
#ifdef SPIKEFORGE_SOURCE_DIR
    if (options.seedPaths.empty() && !options.replay)
        options.seedPaths = {SPIKEFORGE_SOURCE_DIR "/examples",
                             SPIKEFORGE_SOURCE_DIR "/tests/hostile/cases"};
#endif
    std::vector<std::string> seeds = fuzz::readSeedFiles(options.seedPaths, options.maxLength);
    const auto run = [&](const std::string& text) {
        try {
            cli::Config cfg = cli::parseConfig(text, "fuzz.toml");
            cfg.model->finalise();
            return fuzz::Outcome::Accepted;
        } catch (const ModelError& e) {
            if (std::string(e.what()).empty())
                throw std::logic_error("ModelError without a message");
            return fuzz::Outcome::Rejected;
        }
    };
    if (options.replay) return fuzz::replayInputs("config", options, seeds, 1, run);
    seeds.push_back(builtinSeed);
    std::cerr << "fuzz_config: " << seeds.size() << " seeds\n";
    fuzz::Mutator mutator(options.seed, seeds, dictionary, options.maxLength);
    return fuzz::runFuzzer("config", options, mutator, run);
}
