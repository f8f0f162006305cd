// The command line and TOML configs from Python: `python -m spikeforge <subcommand> …` runs the
// same code as the `spikeforge` executable, and load_model reads a model config (docs/config.md)
// into a Model. Built where the CLI is (toml++ and CLI11 found); elsewhere both raise.
#include "bindings.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/model.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#ifdef SPIKEFORGE_PYTHON_CLI
#include "commands.hpp"
#include "config.hpp"
#endif

namespace spikeforge::python {

namespace {

#ifdef SPIKEFORGE_PYTHON_CLI
int cliMain(const std::vector<std::string>& args) {
    std::vector<std::string> copies = args;
    std::vector<char*> argv;
    for (auto& a : copies)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    nb::gil_scoped_release release;
    return cli::runCli(static_cast<int>(copies.size()), argv.data());
}

std::unique_ptr<Model> loadModel(const std::string& path, const std::vector<std::string>& set) {
    cli::Config cfg = cli::loadConfig(path, set);
    if (!cfg.spikeSources.empty())
        throw ModelError(path + ": population '" + cfg.spikeSources.front().population +
                         "' takes spike times from the config, which load_model does not "
                         "apply; run it with `python -m spikeforge simulate`");
    return std::move(cfg.model);
}
#else
[[noreturn]] void noCli() {
    throw BackendError("this build of spikeforge has no command line (toml++ or CLI11 were not "
                       "found when it was built)");
}
int cliMain(const std::vector<std::string>&) {
    noCli();
}
std::unique_ptr<Model> loadModel(const std::string&, const std::vector<std::string>&) {
    noCli();
}
#endif

} // namespace

void bindCli(nb::module_& m) {
#ifdef SPIKEFORGE_PYTHON_CLI
    nb::exception<cli::ConfigError>(m, "ConfigError", m.attr("ModelError"));
#endif
    m.def("cli_main", &cliMain, nb::arg("argv"),
          "Runs the spikeforge command line (argv[0] is the program name); the exit code.");
    m.def("load_model", &loadModel, nb::arg("path"), nb::arg("set") = std::vector<std::string>{},
          "A model config (TOML, docs/config.md) as a Model; `set` holds NAME=VALUE overrides "
          "of its [parameters], as --set.");
}

} // namespace spikeforge::python
