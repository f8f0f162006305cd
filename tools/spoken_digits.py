"""Offline spoken-digit data set in the SHD layout (docs/spoken_digits.md).

Speech from espeak-ng -> an STFT-based gammatone-shaped filter bank (700 channels, log axis
100 Hz - 8 kHz) -> half-wave-rectified envelope -> log compression -> one integrate-and-fire
spike generator per channel.  Used by tools/make-spoken-digits and tools/spoken-digits-baseline.
Needs numpy and h5py for /usr/bin/python3 (Debian python3-numpy, python3-h5py).
"""

import os

# One BLAS thread per worker process: --jobs already uses the cores.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import ctypes
import shutil
import subprocess
import sys


def _keep_freed_memory():
    """Large numpy temporaries (a few MB per frame matrix) are otherwise mmapped and unmapped
    for every example, and the page faults of touching them anew were a third of the run time:
    glibc keeps freed blocks up to 256 MiB in the heap for reuse instead (mallopt; a C library
    without mallopt, or one that ignores these settings, is left as it is)."""
    try:
        libc = ctypes.CDLL(None)
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 256 << 20)
        libc.mallopt(m_trim_threshold, 512 << 20)
    except (OSError, AttributeError):
        pass


_keep_freed_memory()

DEBIAN_PYTHON = "/usr/bin/python3"


def import_or_reexec(tool):
    """Imports numpy and h5py; under another Python (e.g. pyenv) re-runs the tool with
    /usr/bin/python3, where the Debian packages live; else exits with the packages to install."""
    try:
        import numpy  # noqa: F401
        import h5py  # noqa: F401
        return
    except ImportError as e:
        missing = str(e)
    if (os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON)
            and os.path.exists(DEBIAN_PYTHON) and not os.environ.get("SPOKEN_DIGITS_REEXEC")):
        os.environ["SPOKEN_DIGITS_REEXEC"] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    sys.exit(f"{tool}: {missing} (Python {sys.executable}); install the Debian packages "
             f"python3-numpy and python3-h5py for {DEBIAN_PYTHON} (tools/install-deps)")


# ---- what is said, by whom -------------------------------------------------------------------

ENGLISH = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
GERMAN = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"]
CLASS_WORDS = ENGLISH + GERMAN                      # label = index; 0-9 English, 10-19 German
CLASS_KEYS = ["english-" + w for w in ENGLISH] + ["german-" + w for w in GERMAN]

# espeak-ng's own (non-MBROLA) English accents; German is always "de".
ENGLISH_VOICES = ["en-gb", "en-us", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp",
                  "en-gb-x-gbcwmd", "en-029"]

# Voice variants (espeak-ng-data/voices/!v) = speaker identities. Fixed split: the test
# variants are never used for a training speaker, whatever the seed. Whisper, robot, novelty and
# "fast" variants are left out (not speech-like, or they override the speed).
TRAIN_VARIANTS = [
    "m1", "m2", "m3", "m4", "m5", "m7", "f1", "f2", "f3", "f5", "klatt", "klatt2", "klatt4",
    "klatt5", "croak", "Alex", "Alicia", "Andrea", "Annie", "Denis", "Diogo", "Gene", "Henrique",
    "Hugo", "Jacky", "Lee", "Marco", "Mario", "Michael", "Mike", "Nguyen", "adam", "anika",
    "antonio", "aunty", "benjamin", "boris", "caleb", "david", "ed", "edward2", "grandpa",
    "gustave", "iven", "iven2", "iven4", "kaukovalta", "linda", "marcelo", "max", "michel",
    "miguel", "norbert", "pablo", "paul", "pedro", "quincy", "rob", "sandro", "shelby", "steph",
    "steph3", "travis", "victor", "zac",
]
TEST_VARIANTS = ["m6", "m8", "f4", "klatt3", "klatt6", "Andy", "belinda", "edward", "grandma",
                 "iven3", "john", "robert", "steph2", "Gene2", "Storm", "Tweaky"]

SAMPLE_RATE = 22050          # espeak-ng's output rate
HOP = 44                     # STFT hop [samples]: 2.0 ms
DURATION = 1.2               # [s] longest example; audio past it is dropped
NUM_CHANNELS = 700
F_LOW, F_HIGH = 100.0, 8000.0

# Per-speaker and per-example randomness (uniform ranges); docs/spoken_digits.md.
SPEAKER_PITCH = (20, 80)     # espeak-ng -p
SPEAKER_SPEED = (130, 200)   # espeak-ng -s [words/min]
SPEAKER_WARP = (0.93, 1.07)  # vocal-tract scale: filter-bank centre frequencies x 1/warp
EXAMPLE_PITCH = 8            # +- around the speaker's pitch
EXAMPLE_SPEED = 20           # +- around the speaker's speed
EXAMPLE_WARP = 0.02          # +- relative, around the speaker's warp
EXAMPLE_GAIN_DB = 6.0        # +- level
EXAMPLE_SNR_DB = (10.0, 30.0) # white + pink noise, SNR to the speech's RMS
EXAMPLE_ONSET = (0.02, 0.20) # [s] where the speech starts
TIME_JITTER = 0.5e-3         # [s] s.d. of Gaussian jitter of every spike

# Front end constants.
LEVEL_REF = 0.05             # speech RMS after normalisation (full scale = 1)
THRESHOLD_DB = -50.0         # band level [dB re full scale] where a channel starts to fire
DYNAMIC_RANGE_DB = 25.0      # band level range from threshold to saturation
MAX_RATE = 250.0             # [Hz] firing rate at saturation (inter-spike interval >= 4 ms)
COMPRESSION = 1.5            # rate = MAX_RATE * x^COMPRESSION, x = dB above threshold / range


class ToolError(Exception):
    pass


def find_espeak():
    path = shutil.which("espeak-ng")
    if path is None:
        raise ToolError("espeak-ng not found on PATH: install the Debian package 'espeak-ng' "
                        "(tools/install-deps installs it)")
    return path


def make_speakers(np, count, variants, seed, split_id, first_id):
    """count speakers drawn from variants (each variant once before any repeats)."""
    rng = np.random.default_rng([seed, split_id, 0x5eed])
    order = list(rng.permutation(len(variants)))
    speakers = []
    for k in range(count):
        if k % len(variants) == 0 and k > 0:
            order = list(rng.permutation(len(variants)))
        speakers.append({
            "id": first_id + k,
            "variant": variants[order[k % len(variants)]],
            "english": ENGLISH_VOICES[int(rng.integers(len(ENGLISH_VOICES)))],
            "pitch": float(rng.uniform(*SPEAKER_PITCH)),
            "speed": float(rng.uniform(*SPEAKER_SPEED)),
            "warp": float(rng.uniform(*SPEAKER_WARP)),
        })
    return speakers


def synthesize(espeak, text, voice, pitch, speed):
    """int16 samples of espeak-ng saying text, as float in [-1, 1]."""
    import numpy as np
    cmd = [espeak, "--stdout", "-v", voice, "-p", str(pitch), "-s", str(speed), "-a", "100", text]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if res.returncode != 0:
        raise ToolError(f"espeak-ng failed ({' '.join(cmd)}): {res.stderr.decode(errors='replace')}")
    wav = res.stdout
    # espeak-ng --stdout writes a streaming WAV whose size fields are placeholders: find the
    # 'data' chunk and take everything after it.
    if wav[:4] != b"RIFF" or wav[8:12] != b"WAVE":
        raise ToolError(f"espeak-ng did not write a WAV file ({' '.join(cmd)})")
    pos = wav.find(b"data", 12)
    rate = int.from_bytes(wav[24:28], "little")
    if pos < 0 or rate != SAMPLE_RATE:
        raise ToolError(f"unexpected WAV from espeak-ng (rate {rate}, data chunk at {pos})")
    data = wav[pos + 8:]
    data = data[:len(data) // 2 * 2]
    return np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0


class FrontEnd:
    """STFT filter bank: the power spectrum of a Hann-windowed frame every HOP samples, weighted
    by the squared magnitude response of a 4th-order gammatone filter per channel,
    |H(f)|^2 = (1 + ((f - fc) / b)^2)^-4, b = 1.019 ERB(fc), ERB = 24.7 (4.37 fc/kHz + 1).
    Window length follows the bandwidth: 1024 samples (46 ms) for fc < 500 Hz, 512 below
    1.5 kHz, 256 above, so that the window's resolution stays finer than the filter's."""

    WINDOWS = ((1024, 0.0, 500.0), (512, 500.0, 1500.0), (256, 1500.0, 1e9))

    def __init__(self, np):
        self.np = np
        self.fc = np.geomspace(F_LOW, F_HIGH, NUM_CHANNELS)
        self.windows = {}
        for n, _, _ in self.WINDOWS:
            w = np.hanning(n + 2)[1:-1]
            self.windows[n] = (w, np.fft.rfftfreq(n, 1.0 / SAMPLE_RATE), np.sum(w ** 2))

    def weights(self, n, fc):
        np = self.np
        freqs = self.windows[n][1]
        erb = 24.7 * (4.37 * fc / 1000.0 + 1.0)
        b = 1.019 * erb
        return (1.0 + ((freqs[:, None] - fc[None, :]) / b[None, :]) ** 2) ** -4

    def band_levels(self, x, warp):
        """Band power per frame and channel [frames x 700], as mean square of the filter output."""
        np = self.np
        frames = int(round(DURATION * SAMPLE_RATE)) // HOP
        fc = self.fc / warp          # a longer vocal tract (warp > 1) is heard as a shifted bank
        out = np.zeros((frames, NUM_CHANNELS))
        for n, lo, hi in self.WINDOWS:
            sel = (self.fc >= lo) & (self.fc < hi)
            if not sel.any():
                continue
            w, freqs, energy = self.windows[n]
            wts = self.weights(n, fc[sel])
            bins = np.nonzero(wts.max(axis=1) > 1e-7)[0]   # the rest adds < 1e-7 of a band
            lo_bin, hi_bin = bins[0], bins[-1] + 1
            padded = np.concatenate([np.zeros(n // 2), x, np.zeros(n)])
            framed = np.lib.stride_tricks.sliding_window_view(padded, n)[::HOP][:frames]
            spec = np.fft.rfft(framed * w[None, :], axis=1)[:, lo_bin:hi_bin]
            power = (spec.real ** 2 + spec.imag ** 2) * (2.0 / (energy * n))
            out[:, sel] = power @ wts[lo_bin:hi_bin]
        return out


def spikes_from_levels(np, power, rng):
    """Envelope -> compression -> integrate-and-fire.  The band amplitude sqrt(2 P) / pi is the
    mean of the half-wave-rectified filter output (HWR + smoothing); it is compressed
    logarithmically between THRESHOLD_DB and THRESHOLD_DB + DYNAMIC_RANGE_DB, then a power law
    shapes the rate.  Each channel integrates rate * dt without leak from a random start in
    [0, 1) and fires on crossing 1 (reset by subtraction); the crossing time is interpolated
    within the step.  The rate is at most MAX_RATE, so spikes are >= 1/MAX_RATE apart."""
    dt = HOP / SAMPLE_RATE
    hwr = np.sqrt(2.0 * np.maximum(power, 0.0)) / np.pi
    db = 20.0 * np.log10(hwr + 1e-12)
    x = np.clip((db - THRESHOLD_DB) / DYNAMIC_RANGE_DB, 0.0, 1.0)
    drive = MAX_RATE * dt * x ** COMPRESSION                      # per step, <= 0.5
    v0 = rng.uniform(0.0, 1.0, size=(1, power.shape[1]))
    cum = np.concatenate([v0, v0 + np.cumsum(drive, axis=0)], axis=0)  # (frames + 1) x channels
    count = np.floor(cum)
    step, unit = np.nonzero(count[1:] > count[:-1])               # at most one per step
    before = cum[step, unit]
    after = cum[step + 1, unit]
    frac = (count[step + 1, unit] - before) / np.maximum(after - before, 1e-12)
    times = (step + frac) * dt
    return times, unit


def make_example(job):
    """job = (seed, split_id, index, speaker, label): (times [s] float32, units uint16)."""
    import numpy as np
    seed, split_id, index, spk, label, espeak = job
    rng = np.random.default_rng([seed, split_id, index])
    pitch = int(round(np.clip(spk["pitch"] + rng.uniform(-EXAMPLE_PITCH, EXAMPLE_PITCH), 0, 99)))
    speed = int(round(spk["speed"] + rng.uniform(-EXAMPLE_SPEED, EXAMPLE_SPEED)))
    voice = (spk["english"] if label < 10 else "de") + "+" + spk["variant"]
    audio = synthesize(espeak, CLASS_WORDS[label], voice, pitch, speed)

    # Trim espeak-ng's silence, set the level, place the word in a DURATION-long trial.
    loud = np.nonzero(np.abs(audio) > 0.01 * (np.max(np.abs(audio)) + 1e-12))[0]
    if loud.size:
        audio = audio[loud[0]:loud[-1] + 1]
    rms = np.sqrt(np.mean(audio ** 2)) + 1e-12
    gain = LEVEL_REF / rms * 10.0 ** (rng.uniform(-EXAMPLE_GAIN_DB, EXAMPLE_GAIN_DB) / 20.0)
    total = int(round(DURATION * SAMPLE_RATE))
    x = np.zeros(total)
    onset = int(rng.uniform(*EXAMPLE_ONSET) * SAMPLE_RATE)
    seg = audio[:max(0, total - onset)] * gain
    x[onset:onset + seg.size] = seg
    # Noise: half white, half pink (1/f by a spectral slope), at a random SNR to the speech.
    speech_rms = np.sqrt(np.mean(seg ** 2)) + 1e-12
    white = rng.standard_normal(total)
    spec = np.fft.rfft(rng.standard_normal(total))
    f = np.fft.rfftfreq(total, 1.0 / SAMPLE_RATE)
    spec[1:] /= np.sqrt(f[1:] / f[1])
    spec[0] = 0.0
    pink = np.fft.irfft(spec, total)
    noise = white / np.std(white) + pink / (np.std(pink) + 1e-12)
    snr_db = rng.uniform(*EXAMPLE_SNR_DB)
    x += noise / np.std(noise) * speech_rms * 10.0 ** (-snr_db / 20.0)

    warp = spk["warp"] * (1.0 + rng.uniform(-EXAMPLE_WARP, EXAMPLE_WARP))
    power = _front_end(np).band_levels(x, warp)
    times, units = spikes_from_levels(np, power, rng)
    times = times + rng.normal(0.0, TIME_JITTER, size=times.shape)
    keep = (times >= 0.0) & (times < DURATION)
    times, units = times[keep], units[keep]
    order = np.lexsort((units, times))
    return times[order].astype(np.float32), units[order].astype(np.uint16)


_FRONT_END = None


def _front_end(np):
    global _FRONT_END
    if _FRONT_END is None:
        _FRONT_END = FrontEnd(np)
    return _FRONT_END


def plan_split(np, seed, split_id, speakers, reps):
    """(speaker, label) for every example, in a seeded shuffled order."""
    items = [(spk, label) for spk in speakers for label in range(20) for _ in range(reps)]
    order = np.random.default_rng([seed, split_id, 0x0dde]).permutation(len(items))
    return [items[i] for i in order]


def write_h5(path, times, units, labels, speakers):
    """The SHD layout; no timestamps so equal data give byte-identical files."""
    import h5py
    import numpy as np
    n = len(labels)
    with h5py.File(path, "w", libver="earliest", track_order=False) as f:
        def group(name):
            gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
            gcpl.set_obj_track_times(False)
            gid = h5py.h5g.create(f.id, name.encode(), gcpl=gcpl)
            return h5py.Group(gid)

        spikes = group("spikes")
        extra = group("extra")
        tds = spikes.create_dataset("times", (n,), dtype=h5py.vlen_dtype(np.float32),
                                    track_times=False)
        uds = spikes.create_dataset("units", (n,), dtype=h5py.vlen_dtype(np.uint16),
                                    track_times=False)
        for i in range(n):
            tds[i] = times[i]
            uds[i] = units[i]
        f.create_dataset("labels", data=np.asarray(labels, dtype=np.uint16), track_times=False)
        extra.create_dataset("speaker", data=np.asarray(speakers, dtype=np.uint16),
                             track_times=False)
        extra.create_dataset("keys", data=np.array([k.encode() for k in CLASS_KEYS]),
                             track_times=False)


def read_h5(path):
    """(list of times, list of units, labels, speakers) from an SHD-layout file."""
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        times = list(f["spikes/times"][:])
        units = list(f["spikes/units"][:])
        labels = np.asarray(f["labels"][:], dtype=np.int64)
        speakers = np.asarray(f["extra/speaker"][:], dtype=np.int64) if "extra/speaker" in f \
            else None
    return times, units, labels, speakers


# ---- linear baseline ---------------------------------------------------------------------------

def count_features(np, units, channels=NUM_CHANNELS):
    x = np.zeros((len(units), channels))
    for i, u in enumerate(units):
        x[i] = np.bincount(np.asarray(u, dtype=np.int64), minlength=channels)[:channels]
    return x


def train_logistic(np, x, y, classes, l2=1e-3, epochs=500, lr=0.02, seed=0):
    """Multinomial logistic regression (softmax + cross-entropy + L2), full-batch Adam.
    Returns (W, b) for standardised features (mean, sd) also returned."""
    mean = x.mean(axis=0)
    sd = x.std(axis=0) + 1e-6
    z = (x - mean) / sd
    n, d = z.shape
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 0.01, size=(d, classes))
    b = np.zeros(classes)
    onehot = np.eye(classes)[y]
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, epochs + 1):
        logits = z @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / n
        grads = [z.T @ g + l2 * w, g.sum(axis=0)]
        for k, (param, grad) in enumerate(zip((w, b), grads)):
            m[k] = b1 * m[k] + (1 - b1) * grad
            v[k] = b2 * v[k] + (1 - b2) * grad ** 2
            param -= lr * (m[k] / (1 - b1 ** t)) / (np.sqrt(v[k] / (1 - b2 ** t)) + eps)
    return w, b, mean, sd


def accuracy(np, model, x, y):
    w, b, mean, sd = model
    pred = np.argmax(((x - mean) / sd) @ w + b, axis=1)
    return float(np.mean(pred == y))


def baseline(train_path, test_path, out=sys.stdout):
    import numpy as np
    _, tu, ty, _ = read_h5(train_path)
    _, vu, vy, _ = read_h5(test_path)
    classes = int(max(ty.max(), vy.max())) + 1
    xt = count_features(np, tu)
    xv = count_features(np, vu)
    model = train_logistic(np, xt, ty, classes)
    tr, te = accuracy(np, model, xt, ty), accuracy(np, model, xv, vy)
    print(f"linear baseline (logistic regression on per-channel spike counts, "
          f"{xt.shape[0]} train / {xv.shape[0]} test, {classes} classes): "
          f"train accuracy {100 * tr:.1f} %, test accuracy {100 * te:.1f} %", file=out)
    return tr, te
