// The compiler process. Layout of the processes while a compile runs:
//
//   spikeforge ──fork──▶ supervisor (new process group G) ──fork──▶ compiler (in G) ──▶ cc1plus …
//
// The supervisor holds the read end of a "lifeline" pipe whose only writer is spikeforge: when
// spikeforge dies for any reason (SIGKILL included) the pipe reports end-of-file and the
// supervisor kills G, so no compiler process outlives spikeforge. The compiler itself also gets
// PR_SET_PDEATHSIG, so it dies if the supervisor does. A time limit or SIGINT/SIGTERM in
// spikeforge kills G from the parent. Between fork and exec the children only make
// async-signal-safe calls: everything they need is prepared before the fork.
#include "backends/cpu/compiler.hpp"

#include "spikeforge/errors.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <poll.h>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

extern char** environ;

namespace spikeforge::cpu {

namespace {

// ---- SIGINT/SIGTERM while compiling -------------------------------------------------------------
// While at least one compile runs, SIGINT and SIGTERM (unless the host ignores them) go to a
// handler that records the signal and wakes the compile loops through a self-pipe. After the
// compile group is killed and its files removed, the host's handlers are restored and the signal
// is raised again, so the host sees it exactly as if spikeforge had not been there.

volatile sig_atomic_t g_pendingSignal = 0;
std::atomic<int> g_signalPipeWrite{-1};

extern "C" void onTerminatingSignal(int sig) {
    const int savedErrno = errno;
    if (!g_pendingSignal) g_pendingSignal = sig;
    const int fd = g_signalPipeWrite.load(std::memory_order_relaxed);
    if (fd >= 0) {
        const char byte = 1;
        [[maybe_unused]] ssize_t n = write(fd, &byte, 1);
    }
    errno = savedErrno;
}

class SignalGuard {
public:
    SignalGuard() {
        std::lock_guard lock(state().mutex);
        auto& s = state();
        if (s.pipe[0] < 0) {
            if (pipe2(s.pipe, O_CLOEXEC | O_NONBLOCK) != 0)
                throw BackendError(std::string("cannot create a pipe: ") + std::strerror(errno));
            g_signalPipeWrite = s.pipe[1];
        }
        if (s.users++ == 0) {
            hook(SIGINT, s.oldInt, s.hookedInt);
            hook(SIGTERM, s.oldTerm, s.hookedTerm);
        }
        m_fd = s.pipe[0];
    }
    ~SignalGuard() {
        std::lock_guard lock(state().mutex);
        auto& s = state();
        if (--s.users == 0) {
            if (s.hookedInt) sigaction(SIGINT, &s.oldInt, nullptr);
            if (s.hookedTerm) sigaction(SIGTERM, &s.oldTerm, nullptr);
            s.hookedInt = s.hookedTerm = false;
        }
    }
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;
    int fd() const { return m_fd; }

    static void drain() {
        char buf[64];
        while (read(state().pipe[0], buf, sizeof buf) > 0) {
        }
    }

private:
    struct State {
        std::mutex mutex;
        int users = 0;
        int pipe[2] = {-1, -1}; // kept for the life of the process
        struct sigaction oldInt {};
        struct sigaction oldTerm {};
        bool hookedInt = false, hookedTerm = false;
    };
    static State& state() {
        static State s;
        return s;
    }
    static void hook(int sig, struct sigaction& old, bool& hooked) {
        struct sigaction sa {};
        sa.sa_handler = onTerminatingSignal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) return;
        hooked = sigaction(sig, &sa, nullptr) == 0;
    }
    int m_fd = -1;
};

// ---- the two child processes
// ----------------------------------------------------------------------

void closeFrom(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, first, ~0u, 0) == 0) return;
#endif
    for (int fd = first; fd < 4096; fd++)
        close(fd);
}

// Runs in the forked supervisor; never returns. fd 0 becomes the lifeline, fds 1 and 2 the
// output pipe (handed to the compiler, then closed here).
[[noreturn]] void supervise(char* const* args, int outWrite, int lifelineRead) {
    setpgid(0, 0);
    for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE})
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Move both ends above 2 first: with the host's stdio closed they may be fds 0-2 themselves.
    const int lifeline = fcntl(lifelineRead, F_DUPFD, 3), out = fcntl(outWrite, F_DUPFD, 3);
    if (lifeline < 0 || out < 0) _exit(126);
    if (dup2(lifeline, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(126);
    closeFrom(3);
    const pid_t self = getpid();
    const pid_t child = fork();
    if (child < 0) _exit(126);
    if (child == 0) {
        const int devNull = open("/dev/null", O_RDONLY);
        if (devNull < 0 || dup2(devNull, 0) < 0) _exit(127);
        if (devNull != 0) close(devNull);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != self) _exit(127); // the supervisor died before prctl took effect
#endif
        execve(args[0], args, environ);
        static const char msg[] = "spikeforge: cannot execute the compiler\n";
        [[maybe_unused]] ssize_t n = write(2, msg, sizeof msg - 1);
        _exit(127);
    }
    close(1);
    close(2);
    for (;;) {
        int status = 0;
        const pid_t r = waitpid(child, &status, WNOHANG);
        if (r == child) {
            if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
            const int sig = WTERMSIG(status);
            signal(sig, SIG_DFL);
            kill(self, sig); // report the same signal to spikeforge
            _exit(128 + sig);
        }
        if (r < 0 && errno != EINTR) _exit(126);
        pollfd p{0, POLLIN, 0};
        if (poll(&p, 1, 10) > 0) {
            char byte;
            const ssize_t n = read(0, &byte, 1);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                kill(0, SIGKILL); // spikeforge is gone: end the whole group, this process included
                _exit(126);
            }
        }
    }
}

struct Pipe {
    int fd[2] = {-1, -1};
    Pipe() {
        if (pipe2(fd, O_CLOEXEC) != 0)
            throw BackendError(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    ~Pipe() { closeEnd(0), closeEnd(1); }
    void closeEnd(int i) {
        if (fd[i] >= 0) close(fd[i]);
        fd[i] = -1;
    }
};

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

enum class Stop { Running, TimedOut, Interrupted };

// Milliseconds to wait in one poll: short enough to notice the deadline and signals.
int pollSlice(const ProcessOptions& o, std::chrono::steady_clock::time_point t0, int cap) {
    if (o.timeout <= 0) return cap;
    const double left = o.timeout - secondsSince(t0);
    return left <= 0 ? 0 : static_cast<int>(std::min<double>(cap, std::ceil(left * 1000.0)));
}

Stop checkStop(const ProcessOptions& o, std::chrono::steady_clock::time_point t0) {
    if (g_pendingSignal) return Stop::Interrupted;
    if (o.timeout > 0 && secondsSince(t0) >= o.timeout) return Stop::TimedOut;
    return Stop::Running;
}

// Reads the child's output until end-of-file, the deadline or a signal.
Stop readOutput(int fd, int signalFd, const ProcessOptions& o,
                std::chrono::steady_clock::time_point t0, ProcessResult& r) {
    char buf[65536];
    for (;;) {
        if (Stop s = checkStop(o, t0); s != Stop::Running) return s;
        pollfd fds[2] = {{fd, POLLIN, 0}, {signalFd, POLLIN, 0}};
        if (poll(fds, 2, pollSlice(o, t0, 200)) < 0 && errno != EINTR)
            throw BackendError(std::string("poll failed: ") + std::strerror(errno));
        if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return Stop::Running;
        if (n < 0) continue;
        const size_t keep = std::min(static_cast<size_t>(n), o.maxOutput - r.output.size());
        r.output.append(buf, keep);
        if (keep < static_cast<size_t>(n)) r.outputTruncated = true;
    }
}

// Waits until the supervisor has exited, leaving it a zombie so that its pid (the group id)
// cannot be reused before the group is killed.
Stop awaitExit(pid_t pid, int signalFd, const ProcessOptions& o,
               std::chrono::steady_clock::time_point t0) {
    for (;;) {
        siginfo_t info{};
        const int rc = waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if ((rc == 0 && info.si_pid == pid) || (rc < 0 && errno == ECHILD)) return Stop::Running;
        if (Stop s = checkStop(o, t0); s != Stop::Running) return s;
        pollfd p{signalFd, POLLIN, 0};
        poll(&p, 1, pollSlice(o, t0, 5));
    }
}

} // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
    if (argv.empty() || argv[0].empty() || argv[0][0] != '/')
        throw InternalError("runProcess needs an absolute program path");
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);

    SignalGuard guard;
    Pipe out, lifeline;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0)
        throw BackendError("cannot start " + argv[0] + ": fork failed: " + std::strerror(errno));
    if (pid == 0) supervise(args.data(), out.fd[1], lifeline.fd[0]);
    setpgid(pid, pid); // also done by the child: whichever runs first
    out.closeEnd(1);
    lifeline.closeEnd(0);

    ProcessResult r;
    Stop stop = Stop::Running;
    try {
        stop = readOutput(out.fd[0], guard.fd(), options, t0, r);
        if (stop == Stop::Running) stop = awaitExit(pid, guard.fd(), options, t0);
    } catch (...) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        throw;
    }
    kill(-pid, SIGKILL); // the stop, or stragglers of a finished compile
    kill(pid, SIGKILL);  // the supervisor, should the group not exist (it always should)
    int status = 0;
    pid_t waited;
    do {
        waited = waitpid(pid, &status, 0);
    } while (waited < 0 && errno == EINTR);
    r.timedOut = stop == Stop::TimedOut;
    r.interrupted = stop == Stop::Interrupted || g_pendingSignal;
    if (stop != Stop::Running) {
        r.signal = SIGKILL;
    } else if (waited != pid) {
        r.output += "\n(spikeforge: the compiler's exit status is unknown: SIGCHLD is ignored)\n";
    } else if (WIFEXITED(status)) {
        r.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r.signal = WTERMSIG(status);
    }
    return r;
}

void reraisePendingSignal() {
    const int sig = g_pendingSignal;
    if (!sig) return;
    g_pendingSignal = 0;
    SignalGuard::drain();
    raise(sig);
}

std::string compilerName(const std::string& preferred) {
    if (!preferred.empty()) return preferred;
    if (const char* cxx = std::getenv("CXX"); cxx && *cxx) return cxx;
    return "c++";
}

namespace {

bool isExecutableFile(const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

std::string notFound(const std::string& name, const std::string& where) {
    std::string msg = "C++ compiler '" + name + "' not found" + where;
    if (name.find_first_of(" \t") != std::string::npos)
        msg += "; the compiler setting (BackendPreferences::compiler or $CXX) names one program, "
               "without arguments or shell words";
    return msg + " (set CXX or BackendPreferences::compiler)";
}

} // namespace

std::string resolveProgram(const std::string& name) {
    namespace fs = std::filesystem;
    if (name.empty()) throw BackendError("no C++ compiler named (set CXX)");
    if (name.find('/') != std::string::npos) {
        if (!isExecutableFile(name)) throw BackendError(notFound(name, " or not executable"));
        std::error_code ec;
        const fs::path abs = fs::absolute(name, ec);
        return ec ? name : abs.lexically_normal().string();
    }
    const char* envPath = std::getenv("PATH");
    const std::string path = envPath && *envPath ? envPath : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    for (;;) {
        const size_t end = path.find(':', start);
        std::string dir = path.substr(start, end == std::string::npos ? end : end - start);
        if (dir.empty()) dir = ".";
        const std::string candidate = dir + "/" + name;
        if (isExecutableFile(candidate)) {
            std::error_code ec;
            const fs::path abs = fs::absolute(candidate, ec);
            return ec ? candidate : abs.lexically_normal().string();
        }
        if (end == std::string::npos) break;
        start = end + 1;
    }
    throw BackendError(notFound(name, " in $PATH"));
}

namespace {

// The -m options (and cache parameters) the driver passes on for `flags`: with -march=native
// this is where the CPU it resolved to shows up (GCC: "-march=rocketlake -mavx2 …"; Clang:
// "-target-cpu rocketlake -target-feature +avx2 …").
std::string resolvedTarget(const std::string& output) {
    std::istringstream lines(output);
    std::string line, out;
    bool takeNext = false;
    while (std::getline(lines, line)) {
        if (line.rfind("Target:", 0) == 0) out += line + "\n"; // the machine it compiles for
        std::istringstream words(line);
        for (std::string token; words >> token;) {
            std::erase_if(token, [](char c) { return c == '"' || c == '\''; });
            const bool keep = takeNext || token.rfind("-m", 0) == 0 ||
                              token.rfind("l1-cache", 0) == 0 || token.rfind("l2-cache", 0) == 0;
            takeNext = token == "-target-cpu" || token == "-target-feature" || token == "-tune-cpu";
            if (keep || takeNext) out += token + " ";
        }
    }
    return out;
}

// Fallback when the driver does not say what -march=native means: the CPU's own description.
std::string cpuDescription() {
    std::ifstream in("/proc/cpuinfo");
    std::string line, out;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0 ||
            line.rfind("Features", 0) == 0 || line.rfind("CPU part", 0) == 0)
            out += line + "\n";
        if (line.empty() && !out.empty()) break; // the first processor is enough
    }
    return out;
}

std::string describeFailure(const ProcessResult& r) {
    if (r.timedOut) return "did not finish in time";
    if (r.signal) return "was killed by signal " + std::to_string(r.signal);
    return "exited with status " + std::to_string(r.exitCode);
}

} // namespace

CompilerIdentity identifyCompiler(const std::string& path, const std::vector<std::string>& flags,
                                  double timeout) {
    static std::mutex mutex;
    static std::map<std::string, CompilerIdentity> known;
    struct stat st {};
    stat(path.c_str(), &st);
    std::string id = path + '\n' + std::to_string(st.st_mtime) + '\n' + std::to_string(st.st_size);
    for (const auto& f : flags)
        id += '\n' + f;
    std::lock_guard lock(mutex);
    if (auto it = known.find(id); it != known.end()) return it->second;

    ProcessOptions probe;
    probe.timeout = timeout > 0 ? std::min(timeout, 60.0) : 60.0;
    probe.maxOutput = 256 * 1024;
    CompilerIdentity c;
    c.path = path;
    const ProcessResult version = runProcess({path, "--version"}, probe);
    if (version.interrupted) {
        reraisePendingSignal();
        throw BackendError("interrupted while identifying the C++ compiler " + path);
    }
    if (!version.ok())
        throw BackendError("C++ compiler " + path + " does not work: `--version` " +
                           describeFailure(version) + ":\n" + version.output.substr(0, 2000));
    c.version = version.output;
    std::vector<std::string> dry = {path, "-###"};
    dry.insert(dry.end(), flags.begin(), flags.end());
    dry.insert(dry.end(), {"-x", "c++", "-c", "/dev/null", "-o", "/dev/null"});
    const ProcessResult driver = runProcess(dry, probe);
    if (driver.interrupted) {
        reraisePendingSignal();
        throw BackendError("interrupted while identifying the C++ compiler " + path);
    }
    if (driver.ok()) c.target = resolvedTarget(driver.output);
    const bool native = std::find(flags.begin(), flags.end(), "-march=native") != flags.end();
    if (native && c.target.find("-march=") == std::string::npos &&
        c.target.find("-target-cpu") == std::string::npos)
        c.target += cpuDescription();
    return known[id] = c;
}

std::string snippetErrors(const std::string& log) {
    // "<label>:<line>:<column>: [fatal ]error: <message>" where the label is a #line name of a
    // user snippet ("Group.field"), not the generated file or a header.
    static const std::regex userLine(
        R"(^([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_\[\]]*)+):(\d+):(\d+): (fatal error|error): (.*)$)");
    std::istringstream in(log);
    std::string line, out;
    std::set<std::string> seen;
    std::smatch m;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!std::regex_match(line, m, userLine) || m[1] == "spikeforge_generated.cpp") continue;
        if (seen.insert(line).second) out += "  " + line + "\n";
    }
    return out;
}

} // namespace spikeforge::cpu
