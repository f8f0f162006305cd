#include "input_file.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spikeforge::cli {

namespace {

// Closes the descriptor on every exit path.
class Descriptor {
public:
    explicit Descriptor(int fd) : m_fd(fd) {}
    ~Descriptor() {
        if (m_fd >= 0) ::close(m_fd);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

std::string kindOf(mode_t mode) {
    if (S_ISDIR(mode)) return "it is a directory";
    if (S_ISFIFO(mode)) return "it is a FIFO (named pipe)";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device";
    if (S_ISSOCK(mode)) return "it is a socket";
    return "it is not a regular file";
}

std::string tooLarge(uint64_t limit) {
    return "it is larger than the limit of " + std::to_string(limit) + " bytes (" +
           std::to_string(limit >> 20) + " MiB)";
}

} // namespace

std::string readInputFile(const std::string& path, uint64_t limit) {
    const Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0) throw InputFileError(std::strerror(errno), true);
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) throw InputFileError(std::strerror(errno), false);
    if (!S_ISREG(info.st_mode)) throw InputFileError(kindOf(info.st_mode), false);
    if (static_cast<uint64_t>(info.st_size) > limit) throw InputFileError(tooLarge(limit), false);

    std::string text;
    text.resize(static_cast<std::size_t>(info.st_size) + 1); // one more byte: did it grow?
    std::size_t filled = 0;
    for (;;) {
        if (filled == text.size()) {
            if (filled > limit) throw InputFileError(tooLarge(limit), false);
            text.resize(std::min<uint64_t>(limit + 1, filled + (uint64_t{1} << 16)));
        }
        const ssize_t got = ::read(fd.get(), text.data() + filled, text.size() - filled);
        if (got < 0) {
            if (errno == EINTR) continue;
            throw InputFileError(std::strerror(errno), false);
        }
        if (got == 0) break;
        filled += static_cast<std::size_t>(got);
    }
    if (filled > limit) throw InputFileError(tooLarge(limit), false);
    text.resize(filled);
    return text;
}

std::optional<FileIdentity> fileIdentity(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return std::nullopt;
    return FileIdentity{info.st_dev, info.st_ino};
}

} // namespace spikeforge::cli
