#pragma once
// Running the system compiler: an argument vector (no shell), output captured through a pipe
// (bounded), its own process group, a time limit, and no orphans — the compiler dies with
// spikeforge (killed or interrupted) — plus the compiler's identity for the cache key and the
// mapping of its diagnostics back to the user's snippets.
#include <string>
#include <vector>

namespace spikeforge::cpu {

struct ProcessResult {
    int exitCode = -1;        // exit status when the program exited, else -1
    int signal = 0;           // the signal that ended it, else 0
    bool timedOut = false;    // stopped (with its whole process group) at the time limit
    bool interrupted = false; // stopped because spikeforge got SIGINT/SIGTERM
    std::string output;       // stdout and stderr, interleaved, at most `maxOutput` bytes
    bool outputTruncated = false;
    bool ok() const { return exitCode == 0; }
};

struct ProcessOptions {
    double timeout = 0.0;               // [s] 0 = no limit
    size_t maxOutput = size_t(1) << 20; // [bytes] the rest of the output is read and dropped
};

// Runs `argv[0]` (an absolute path) with `argv` and this process's environment; stdin is
// /dev/null. The program runs in a new process group under a small supervisor process that
// kills the group if spikeforge dies. On SIGINT/SIGTERM during the run the group is killed and
// `interrupted` set; the caller cleans up and then calls `reraisePendingSignal()`.
ProcessResult runProcess(const std::vector<std::string>& argv, const ProcessOptions& options);

// After an interrupted run has been cleaned up: delivers the signal that interrupted it to the
// host program's own handler (or its default action, which ends the process).
void reraisePendingSignal();

// The compiler named by BackendPreferences::compiler, else $CXX, else `c++`: one program, a path
// or a name looked up in $PATH (no arguments, no shell words).
std::string compilerName(const std::string& preferred);
// The absolute path of that program; BackendError naming it when it cannot be found or run.
std::string resolveProgram(const std::string& name);

// What identifies the compiler's output for the cache key, computed once per process per
// (compiler, flags): its `--version` text, and the target it resolves the flags to (the -m
// options the driver passes on, e.g. what -march=native means on this CPU).
struct CompilerIdentity {
    std::string path;    // resolved, absolute
    std::string version; // `<cc> --version`
    std::string target;  // resolved -march/-mtune/feature options (or the CPU's flags)
};
CompilerIdentity identifyCompiler(const std::string& path, const std::vector<std::string>& flags,
                                  double timeout);

// Compiler diagnostics that point into a user's snippet (`Group.field:L:C: error: …`, fatal
// errors included), each once, in order, one per line with two spaces of indent.
std::string snippetErrors(const std::string& log);

} // namespace spikeforge::cpu
