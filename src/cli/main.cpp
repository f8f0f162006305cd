// The `spikeforge` executable; everything but argument dispatch lives in spikeforge_cli.
#include "commands.hpp"

int main(int argc, char** argv) {
    return spikeforge::cli::runCli(argc, argv);
}
