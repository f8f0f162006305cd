#pragma once
// Where recorded spikes go during `simulate`: per-population counts for the report, and the
// --record CSV file, written as the run goes.
#include "spikeforge/simulation.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace spikeforge::cli {

// A bad command-line value that only shows once the run is set up (exit code 2).
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The --record CSV file ("time_ms,population,neuron,batch"). Opened before the model is built so
// that a bad path fails before a long compile.
class SpikeCsvFile {
public:
    // Refuses (UsageError) an existing file unless `force`, and any of `inputs` (the config and
    // the spike-time files, compared by device and inode) even with `force`. Other failures to
    // open are std::runtime_error (exit code 1).
    SpikeCsvFile(const std::string& path, bool force, const std::vector<std::string>& inputs);
    // Without close(): a file this run created is removed (a failed run leaves nothing behind).
    ~SpikeCsvFile();
    SpikeCsvFile(const SpikeCsvFile&) = delete;
    SpikeCsvFile& operator=(const SpikeCsvFile&) = delete;

    void write(const std::string& population, std::span<const SpikeEvent> spikes);
    // Flushes and closes; throws std::runtime_error when a write failed (disk full, …).
    void close();
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    std::FILE* m_file = nullptr;
    bool m_created = false; // this run created the file (no --force)
};

// Receives every recorded spike, in chunks, population by population.
class SpikeOutput {
public:
    explicit SpikeOutput(SpikeCsvFile* csv) : m_csv(csv) {}
    void operator()(const std::string& population, std::span<const SpikeEvent> spikes);
    uint64_t count(const std::string& population) const;

private:
    SpikeCsvFile* m_csv; // may be null
    std::map<std::string, uint64_t> m_counts;
};

} // namespace spikeforge::cli
