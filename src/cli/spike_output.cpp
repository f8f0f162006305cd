#include "spike_output.hpp"

#include "input_file.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spikeforge::cli {

namespace {

std::string cannotWrite(const std::string& path, int error) {
    return "cannot write '" + path + "': " + std::strerror(error);
}

// Opens without truncating: the identity check below must see the file before it is changed.
// O_NONBLOCK: a FIFO without reader fails (ENXIO) instead of blocking.
int openForRecord(const std::string& path, bool force) {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (force ? 0 : O_EXCL);
    const int fd = ::open(path.c_str(), flags, 0666);
    if (fd >= 0) return fd;
    if (errno == EEXIST)
        throw UsageError("--record '" + path + "': the file exists; pass --force to overwrite it");
    throw std::runtime_error(cannotWrite(path, errno));
}

// An input file (compared by device and inode) is never overwritten.
void refuseInput(const std::string& path, const std::vector<std::string>& inputs, dev_t device,
                 ino_t inode) {
    for (const std::string& input : inputs) {
        const auto id = fileIdentity(input);
        if (id && id->device == device && id->inode == inode)
            throw UsageError("--record '" + path + "' is the input file '" + input +
                             "'; it is never overwritten, even with --force");
    }
}

} // namespace

SpikeCsvFile::SpikeCsvFile(const std::string& path, bool force,
                           const std::vector<std::string>& inputs)
    : m_path(path) {
    if (const auto id = fileIdentity(path)) // the clearer message first; rechecked once open
        refuseInput(path, inputs, id->device, id->inode);
    const int fd = openForRecord(path, force);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        throw std::runtime_error(cannotWrite(path, error));
    }
    m_created = !force;
    try {
        refuseInput(path, inputs, info.st_dev, info.st_ino);
    } catch (const UsageError&) {
        ::close(fd); // nothing was written or truncated
        throw;
    }
    const int fdFlags = ::fcntl(fd, F_GETFL);
    const bool ok = fdFlags >= 0 && ::fcntl(fd, F_SETFL, fdFlags & ~O_NONBLOCK) == 0 &&
                    (!S_ISREG(info.st_mode) || ::ftruncate(fd, 0) == 0);
    m_file = ok ? ::fdopen(fd, "w") : nullptr;
    if (!m_file) {
        const int error = errno;
        ::close(fd);
        if (m_created) ::unlink(path.c_str());
        throw std::runtime_error(cannotWrite(path, error));
    }
    std::fputs("time_ms,population,neuron,batch\n", m_file);
}

SpikeCsvFile::~SpikeCsvFile() {
    if (!m_file) return;
    std::fclose(m_file);
    if (m_created) ::unlink(m_path.c_str());
}

void SpikeCsvFile::write(const std::string& population, std::span<const SpikeEvent> spikes) {
    for (const SpikeEvent& s : spikes)
        std::fprintf(m_file, "%.10g,%s,%u,%u\n", s.time, population.c_str(),
                     static_cast<unsigned>(s.neuron), static_cast<unsigned>(s.batch));
}

void SpikeCsvFile::close() {
    std::FILE* file = std::exchange(m_file, nullptr);
    const bool failed = std::ferror(file) != 0;
    if (std::fclose(file) != 0) throw std::runtime_error(cannotWrite(m_path, errno));
    if (failed) throw std::runtime_error("cannot write '" + m_path + "': a write failed");
}

void SpikeOutput::operator()(const std::string& population, std::span<const SpikeEvent> spikes) {
    m_counts[population] += spikes.size();
    if (m_csv) m_csv->write(population, spikes);
}

uint64_t SpikeOutput::count(const std::string& population) const {
    const auto it = m_counts.find(population);
    return it == m_counts.end() ? 0 : it->second;
}

} // namespace spikeforge::cli
