// The progress bar and the metrics CSV (fit.hpp). The checkpoint callback is in
// fit_checkpoint.cpp.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/fit.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <system_error>

namespace spikeforge::train {

namespace {

// "m:ss" or "h:mm:ss" for a duration [s].
std::string clockText(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0.0) return "?";
    const auto total = static_cast<uint64_t>(std::llround(seconds));
    char text[32];
    if (total >= 3600)
        std::snprintf(text, sizeof text, "%llu:%02llu:%02llu",
                      static_cast<unsigned long long>(total / 3600),
                      static_cast<unsigned long long>(total / 60 % 60),
                      static_cast<unsigned long long>(total % 60));
    else
        std::snprintf(text, sizeof text, "%llu:%02llu", static_cast<unsigned long long>(total / 60),
                      static_cast<unsigned long long>(total % 60));
    return text;
}

std::string format(const char* spec, double value) {
    char text[64];
    std::snprintf(text, sizeof text, spec, value);
    return text;
}

// "loss 0.6931 acc 52.3%" for one set of metrics.
std::string metricsText(const Metrics& m) {
    return "loss " + format("%.4f", m.meanLoss()) + " acc " +
           format("%.1f%%", 100.0 * m.accuracy());
}

std::string epochText(uint32_t epoch, uint32_t epochs) {
    return "epoch " + std::to_string(epoch + 1) + "/" + std::to_string(epochs);
}

} // namespace

// ---- ProgressBar ----

void ProgressBar::onTrainBegin(uint32_t, uint32_t epochs) {
    m_epochs = epochs;
}

void ProgressBar::onEpochBegin(uint32_t, uint64_t examples) {
    m_examples = examples;
    m_start = Clock::now();
    m_lastDraw = {};
}

void ProgressBar::onBatchesDone(uint32_t epoch, uint64_t done, uint64_t total) {
    if (!m_interactive || total == 0) return;
    const auto now = Clock::now();
    // At most 10 redraws a second: a terminal is slow, and the line is for a human.
    if (done != total && now - m_lastDraw < std::chrono::milliseconds(100)) return;
    m_lastDraw = now;
    const double elapsed = std::chrono::duration<double>(now - m_start).count(); // [s]
    const double fraction = double(done) / double(total);
    const double rate = elapsed > 0.0 ? fraction * double(m_examples) / elapsed : 0.0; // [1/s]
    const double eta = fraction > 0.0 ? elapsed * (1.0 - fraction) / fraction : NAN;   // [s]
    // \r returns to the line start, \x1b[K clears what a longer previous line left behind.
    m_out << '\r' << epochText(epoch, m_epochs) << "  batch " << done << '/' << total << "  "
          << format("%.0f", rate) << " ex/s  ETA " << clockText(eta) << "\x1b[K" << std::flush;
}

void ProgressBar::onEpochEnd(const EpochReport& r) {
    std::string line = epochText(r.epoch, m_epochs) + "  train " + metricsText(r.train);
    if (r.validation) line += "  validation " + metricsText(*r.validation);
    line += "  " + format("%.3g", r.seconds) + " s  lr " + format("%.3g", r.learningRate);
    for (const PopulationActivity& a : r.activity) { // a runaway or dying layer shows here
        line += "  " + a.population + " " + format("%.3g", a.spikesPerNeuron) + " spikes/neuron";
        if (a.silent > 0) line += " (" + std::to_string(a.silent) + " silent)";
    }
    if (m_interactive)
        m_out << '\r' << line << "\x1b[K\n" << std::flush;
    else
        m_out << line << '\n' << std::flush;
}

// ---- MetricsCsv ----

const char* MetricsCsv::header() {
    return "epoch,train_loss,train_accuracy,validation_loss,validation_accuracy,seconds,"
           "learning_rate";
}

namespace {

// The rows of `path` for epochs 1 … keep (a resumed run repeats the later ones).
std::string keptRows(const std::filesystem::path& path, uint32_t keep) {
    std::ifstream in(path);
    if (!in)
        throw ModelError("metrics file '" + path.string() +
                         "' cannot be read; a resumed run appends to the file of the first run");
    std::string line, kept;
    if (!std::getline(in, line) || line != MetricsCsv::header())
        throw ModelError("metrics file '" + path.string() +
                         "' does not start with spikeforge's metrics header; not touching it");
    kept = line + '\n';
    unsigned lineNumber = 1;
    while (std::getline(in, line)) {
        lineNumber++;
        unsigned long epoch = 0;
        if (std::sscanf(line.c_str(), "%lu,", &epoch) != 1)
            throw ModelError("metrics file '" + path.string() + "':" + std::to_string(lineNumber) +
                             ": not a metrics row; not touching the file");
        if (epoch <= keep) kept += line + '\n';
    }
    return kept;
}

} // namespace

MetricsCsv::MetricsCsv(std::filesystem::path path, uint32_t resumeFrom) : m_path(std::move(path)) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(m_path, ec);
    if (resumeFrom == 0) {
        if (exists)
            throw ModelError("metrics file '" + m_path.string() +
                             "' already exists; remove it or resume the run that wrote it");
        m_out.open(m_path);
        if (m_out) m_out << header() << '\n' << std::flush;
    } else {
        if (!exists)
            throw ModelError("metrics file '" + m_path.string() +
                             "' is missing; a resumed run appends to the file of the first run");
        const std::string kept = keptRows(m_path, resumeFrom);
        // Rewrite through a temporary file so that a failure leaves the old file whole.
        const std::filesystem::path tmp = m_path.string() + ".tmp";
        {
            std::ofstream out(tmp, std::ios::trunc);
            out << kept;
            if (!out.flush())
                throw ModelError("metrics file '" + tmp.string() + "' cannot be written");
        }
        std::filesystem::rename(tmp, m_path);
        m_out.open(m_path, std::ios::app);
    }
    if (!m_out) throw ModelError("metrics file '" + m_path.string() + "' cannot be written");
}

void MetricsCsv::onEpochEnd(const EpochReport& r) {
    std::ostringstream row;
    row.precision(9);
    row << (r.epoch + 1) << ',' << r.train.meanLoss() << ',' << r.train.accuracy() << ',';
    if (r.validation)
        row << r.validation->meanLoss() << ',' << r.validation->accuracy();
    else
        row << ',';
    row << ',' << r.seconds << ',' << r.learningRate << '\n';
    m_out << row.str() << std::flush;
    if (!m_out) throw ModelError("metrics file '" + m_path.string() + "': write failed");
}

} // namespace spikeforge::train
