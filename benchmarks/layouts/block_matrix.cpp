// The matrix form of block-sparse propagation (BlockSparseInit::propagation) against the
// event-driven form, and against a dense GEMM of the same shape:
//   bench_layout_block_matrix [--neurons 4096] [--block 32] [--density 0.1]
//                             [--batches 1,8,32,64] [--rates 10,50,200]
//                             [--densities 0.05,0.1,0.2,0.3,0.5] [--gemm-batch 64]
//                             [--steps 20] [--repeats 3] [--backend cpu] [--threads 1]
// Every model runs step by step (cpuStepOrder ByStep), the order a matrix-form model runs in.
// Part 1: N Bernoulli sources spiking at each rate [Hz] (dt 1 ms) drive N non-spiking targets in
// each batch, through one BlockSparse group (Random layout) in the event-driven and the matrix
// form: the propagation time per step of each (the step time less that of the neurons alone,
// measured first), their ratio, and the expected sources spiking per block-row and step, b x p,
// by which Auto chooses (kMatrixRowsPerTile).
// Part 2: every source spiking every step (X all ones) at batch --gemm-batch, the matrix form at
// each block density against sgemm of the dense shape (batch x N times N x N) through CBLAS
// (OpenBLAS where the build found it, one thread as the simulation's), or cuBLAS on the GPU
// with --backend cuda (where the build found the CUDA toolkit's): ms each, the ratio, and
// the break-even density (the highest density measured at which the matrix form is faster).
// X is 0/1, so the matrix form adds weights where a GEMM multiplies and adds: the same memory
// traffic, half the arithmetic.
#include "bench_util.hpp"
#include "layer_models.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifdef SF_BENCH_CBLAS
#include <cblas.h>
#endif
#ifdef SF_BENCH_CUBLAS
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

using namespace spikeforge;

namespace {

struct Options {
    unsigned neurons = 4096, block = 32, steps = 20, repeats = 3, gemmBatch = 64;
    double density = 0.1;
    std::vector<double> batches = {1, 8, 32, 64}, rates = {10, 50, 200};
    std::vector<double> densities = {0.05, 0.1, 0.2, 0.3, 0.5};
    std::string backend = "cpu";
    int threads = 1;
};

// ms per step of N Bernoulli(rate) sources -> N accumulators in `batch` elements, through a
// BlockSparse group of `density` in `form`, or with no synapse group at all (`none`).
double stepMs(const Options& o, unsigned batch, double rate, double density, Propagation form,
              bool none, const BackendPreferences& prefs) {
    Model m("block_matrix_bench");
    m.setDT(1.0);
    m.setSeed(5);
    m.setBatchSize(batch);
    m.addNeuronGroup("In", o.neurons, sfbench::bernoulli(), {{"p", std::min(1.0, rate * 1e-3)}},
                     {{"spikes", 0.0}});
    m.addNeuronGroup("Out", o.neurons, sfbench::accumulate(), {}, {{"acc", 0.0}});
    if (!none) {
        BlockSparseInit b{o.block, BlockLayout::Random, density};
        b.propagation = form;
        m.addSynapseGroup("Syn", MatrixType::BlockSparse, 0, "In", "Out",
                          {sfbench::pulse(), {}, {{"g", 0.25}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, b);
    }
    Simulation sim(m, prefs);
    sim.run(1);
    return sfbench::msPerStep(sim, o.steps, o.repeats);
}

// ms of one sgemm C(batch x n) += A(batch x n) B(n x n), median of the repeats; 0 without CBLAS.
double gemmMs(unsigned batch, unsigned n, unsigned repeats) {
#ifdef SF_BENCH_CBLAS
    std::vector<float> a(size_t(batch) * n, 1.0f), b(size_t(n) * n, 0.25f),
        c(size_t(batch) * n, 0.0f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(batch), int(n), int(n), 1.0f,
                a.data(), int(n), b.data(), int(n), 1.0f, c.data(), int(n)); // warm
    std::vector<double> ms;
    for (unsigned r = 0; r < std::max(3u, repeats); r++) {
        const auto t0 = std::chrono::steady_clock::now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(batch), int(n), int(n), 1.0f,
                    a.data(), int(n), b.data(), int(n), 1.0f, c.data(), int(n));
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    return sfbench::median(ms);
#else
    (void)batch;
    (void)n;
    (void)repeats;
    return 0.0;
#endif
}

// ms of one cublasSgemm of the same shape on the GPU (device-resident operands, timed with
// events), median of the repeats; 0 without cuBLAS in the build or without a usable GPU.
double cublasMs(unsigned batch, unsigned n, unsigned repeats) {
#ifdef SF_BENCH_CUBLAS
    float *a = nullptr, *b = nullptr, *c = nullptr;
    const size_t bytesA = size_t(batch) * n * 4, bytesB = size_t(n) * n * 4;
    if (cudaMalloc(&a, bytesA) != cudaSuccess || cudaMalloc(&b, bytesB) != cudaSuccess ||
        cudaMalloc(&c, bytesA) != cudaSuccess)
        return 0.0;
    cudaMemset(a, 0, bytesA);
    cudaMemset(b, 0, bytesB);
    cudaMemset(c, 0, bytesA);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 0.0;
    const float one = 1.0f;
    // Row-major C = A B is column-major C^T = B^T A^T: m = n, n = batch, k = n.
    auto gemm = [&] {
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(batch), int(n), &one, b, int(n), a,
                    int(n), &one, c, int(n));
    };
    gemm();
    cudaDeviceSynchronize();
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<double> ms;
    for (unsigned r = 0; r < std::max(3u, repeats); r++) {
        cudaEventRecord(start);
        gemm();
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float t = 0;
        cudaEventElapsedTime(&t, start, stop);
        ms.push_back(t);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return sfbench::median(ms);
#else
    (void)batch;
    (void)n;
    (void)repeats;
    return 0.0;
#endif
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--neurons")
            o.neurons = unsigned(std::stoul(v));
        else if (a == "--block")
            o.block = unsigned(std::stoul(v));
        else if (a == "--density")
            o.density = std::stod(v);
        else if (a == "--batches")
            o.batches = sfbench::parseList(v);
        else if (a == "--rates")
            o.rates = sfbench::parseList(v);
        else if (a == "--densities")
            o.densities = sfbench::parseList(v);
        else if (a == "--gemm-batch")
            o.gemmBatch = unsigned(std::stoul(v));
        else if (a == "--steps")
            o.steps = unsigned(std::stoul(v));
        else if (a == "--repeats")
            o.repeats = unsigned(std::stoul(v));
        else if (a == "--backend")
            o.backend = v;
        else if (a == "--threads")
            o.threads = std::stoi(v);
        else {
            std::cerr << "unknown option " << a << "\n";
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
#ifdef SF_BENCH_CBLAS
    openblas_set_num_threads(o.threads);
#endif
    BackendPreferences prefs = sfbench::preferences(o.backend, o.threads);
    // Step by step for every model, so the baseline (neurons alone, which could run one batch
    // element at a time) is subtracted from steps run in the same order.
    if (o.backend == "cpu") prefs.cpuStepOrder = BackendPreferences::StepOrder::ByStep;
    std::printf("%u -> %u neurons, b = %u, %s, %d thread(s); median of %u x %u steps\n", o.neurons,
                o.neurons, o.block, o.backend.c_str(), o.threads, o.repeats, o.steps);
    std::string json = "{\"neurons\": " + std::to_string(o.neurons) +
                       ", \"block\": " + std::to_string(o.block) + ", \"backend\": \"" + o.backend +
                       "\", \"forms\": [";
    std::printf("\nPart 1: event-driven vs matrix form, block density %.3g\n", o.density);
    std::printf("%6s %8s %11s %12s %12s %10s\n", "batch", "rate Hz", "rows/tile", "event ms",
                "matrix ms", "event/mat");
    bool first = true;
    for (double batchValue : o.batches)
        for (double rate : o.rates) {
            const unsigned batch = unsigned(batchValue);
            const double base = stepMs(o, batch, rate, o.density, Propagation::Auto, true, prefs);
            const double event = std::max(
                stepMs(o, batch, rate, o.density, Propagation::EventDriven, false, prefs) - base,
                1e-6);
            const double matrix = std::max(
                stepMs(o, batch, rate, o.density, Propagation::Matrix, false, prefs) - base, 1e-6);
            const double p = std::min(1.0, rate * 1e-3);
            const double uses = o.block * p;
            std::printf("%6u %8.0f %11.2f %12.4f %12.4f %9.2fx\n", batch, rate, uses, event, matrix,
                        event / matrix);
            json += std::string(first ? "" : ", ") + "{\"batch\": " + std::to_string(batch) +
                    ", \"rate_hz\": " + std::to_string(rate) +
                    ", \"rows_per_tile\": " + std::to_string(uses) +
                    ", \"event_ms\": " + std::to_string(event) +
                    ", \"matrix_ms\": " + std::to_string(matrix) + "}";
            first = false;
        }
    json += "], \"gemm\": [";
    // The dense product where the matrix form runs: cuBLAS for the cuda backend, else CBLAS.
    const bool gpu = o.backend == "cuda";
    const double gemm = gpu ? cublasMs(o.gemmBatch, o.neurons, o.repeats)
                            : gemmMs(o.gemmBatch, o.neurons, o.repeats);
#ifdef SF_BENCH_CBLAS
    const char* cpuBlas = "CBLAS";
#else
    const char* cpuBlas = "no CBLAS in this build: not measured";
#endif
#ifdef SF_BENCH_CUBLAS
    const char* gpuBlas = gemm > 0 ? "cuBLAS" : "cuBLAS: no usable GPU";
#else
    const char* gpuBlas = "no cuBLAS in this build: not measured";
#endif
    std::printf("\nPart 2: every source spiking, batch %u: matrix form vs sgemm %u x %u x %u "
                "(%s): %.4f ms\n",
                o.gemmBatch, o.gemmBatch, o.neurons, o.neurons, gpu ? gpuBlas : cpuBlas, gemm);
    std::printf("%8s %12s %12s\n", "density", "matrix ms", "vs sgemm");
    double breakEven = 0;
    first = true;
    for (double d : o.densities) {
        const double base = stepMs(o, o.gemmBatch, 1000.0, d, Propagation::Auto, true, prefs);
        const double matrix = std::max(
            stepMs(o, o.gemmBatch, 1000.0, d, Propagation::Matrix, false, prefs) - base, 1e-6);
        const double speedup = gemm > 0 ? gemm / matrix : 0;
        if (speedup > 1.0) breakEven = std::max(breakEven, d);
        std::printf("%8.3g %12.4f %11.2fx\n", d, matrix, speedup);
        json += std::string(first ? "" : ", ") + "{\"density\": " + std::to_string(d) +
                ", \"matrix_ms\": " + std::to_string(matrix) +
                ", \"sgemm_ms\": " + std::to_string(gemm) + "}";
        first = false;
    }
    if (gemm > 0)
        std::printf("break-even: faster than sgemm up to density %.3g of those measured\n",
                    breakEven);
    std::printf("%s]}\n", json.c_str());
    return 0;
}
