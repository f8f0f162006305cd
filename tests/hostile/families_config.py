"""Hostile-corpus families about the config: numbers and domains, run length and sizes,
malformed TOML, schema, shadowing, spike sources, files and options, valid oddities, special
inputs."""
from case_helpers import (ENTRIES, VALID, case, known_key, lif, model, poisson, proj, sim)


# ---------------------------------------------------------------------------------------------
# 4. Numbers: NaN, infinities, overflow, domains of parameters and initialisers.

def numbers():
    for name, value in {"nan": "nan", "inf": "inf", "minus_inf": "-inf"}.items():
        case(f"num_lif_C_{name}", model() + lif(params={"C": value}), 2, r"P.*C|C.*P")
    case("num_float_overflow_param", model() + lif(params={"Ioffset": "1e39"}), 2,
         r"P.*Ioffset|Ioffset.*P", comment="finite as a double, inf as the model's float")
    case("num_float_overflow_init", model() + lif(V="-1e39"), 2, r"P.*V|V.*P")
    case("num_float_overflow_expression", model() + '[parameters]\nbig = "1e30 * 1e30"\n' +
         lif(params={"Ioffset": '"big"'}), 2, r"Ioffset|big")
    case("num_double_overflow_expression", model() + '[parameters]\nbig = "1e300 * 1e300"\n' +
         lif(), 2, r"big|overflow")
    case("num_toml_huge_float", model() + lif(params={"TauM": "1e400"}), 2,
         r"TauM|num_toml_huge_float\.toml:\d+")
    case("num_toml_huge_integer", model() + lif(size="99999999999999999999"), 2,
         r"num_toml_huge_integer\.toml:\d+")
    case("num_expression_div_zero", model() + lif(params={"TauM": '"20 / 0"'}), 2, r"TauM|zero")
    case("num_expression_function", model() + lif(params={"TauM": '"system(3)"'}), 2, r"TauM")
    case("num_expression_power", model() + lif(params={"TauM": '"2^4"'}), 2, r"TauM")
    case("num_expression_nan_word", model() + lif(params={"TauM": '"nan"'}), 2, r"TauM|nan")
    case("num_double_model_nan_var", model(extra='precision = "double"') + lif(V="nan"), 2,
         r"P.*V|V.*P")
    # Built-in neuron and postsynaptic domains.
    case("num_lif_C_zero", model() + lif(params={"C": "0.0"}), 2, r"\bC\b")
    case("num_lif_taum_negative", model() + lif(params={"TauM": "-20.0"}), 2, r"TauM")
    case("num_lif_taurefrac_negative", model() + lif(params={"TauRefrac": "-1.0"}), 2,
         r"TauRefrac")
    case("num_poisson_negative_rate", model() + poisson(rate="-5.0") + lif(), 2, r"rate")
    case("num_poisson_nan_rate", model() + poisson(rate="nan") + lif(), 2, r"rate")
    case("num_expcurr_tau_zero", model() + poisson() + lif() +
         proj(ps='{ model = "ExpCurr", params = { tau = 0.0 } }'), 2, r"tau")
    case("num_expcond_tau_negative", model() + poisson() + lif() +
         proj(ps='{ model = "ExpCond", params = { tau = -5.0, E = 0.0 } }'), 2, r"tau")
    # Variable initialisers.
    bad_inits = {
        "uniform_min_gt_max": '{ init = "Uniform", min = 1.0, max = -1.0 }',
        "uniform_nan": '{ init = "Uniform", min = nan, max = 1.0 }',
        "normal_sd_negative": '{ init = "Normal", mean = 0.0, sd = -1.0 }',
        "normal_sd_inf": '{ init = "Normal", mean = 0.0, sd = inf }',
        "normalclipped_min_gt_max":
            '{ init = "NormalClipped", mean = 0.0, sd = 1.0, min = 1.0, max = -1.0 }',
        "normalclipped_empty": '{ init = "NormalClipped", mean = 0.0, sd = 1.0, min = 0.5, max = 0.5 }',
        "normalclipped_unreachable":
            '{ init = "NormalClipped", mean = -65.0, sd = 1.0, min = 100.0, max = 200.0 }',
        "normalclipped_sd_zero_outside":
            '{ init = "NormalClipped", mean = 0.0, sd = 0.0, min = 1.0, max = 2.0 }',
        "exponential_lambda_zero": '{ init = "Exponential", lambda = 0.0 }',
        "exponential_lambda_negative": '{ init = "Exponential", lambda = -2.0 }',
        "gamma_a_zero": '{ init = "Gamma", a = 0.0, b = 1.0 }',
        "gamma_b_negative": '{ init = "Gamma", a = 2.0, b = -1.0 }',
        "binomial_n_too_big": '{ init = "Binomial", n = 5e9, p = 0.5 }',
        "binomial_n_negative": '{ init = "Binomial", n = -3, p = 0.5 }',
        "binomial_n_fraction": '{ init = "Binomial", n = 2.5, p = 0.5 }',
        "binomial_p_above_one": '{ init = "Binomial", n = 10, p = 1.5 }',
        "binomial_p_negative": '{ init = "Binomial", n = 10, p = -0.5 }',
        "init_unknown": '{ init = "Uniformm", min = 0.0, max = 1.0 }',
        "init_missing_param": '{ init = "Uniform", min = 0.0 }',
        "init_extra_param": '{ init = "Uniform", min = 0.0, max = 1.0, mean = 3.0 }',
        "init_param_string": '{ init = "Uniform", min = "low", max = 1.0 }',
        "init_not_string": '{ init = 5, min = 0.0, max = 1.0 }',
        "init_missing_init": '{ min = 0.0, max = 1.0 }',
    }
    for name, init in bad_inits.items():
        case(f"init_{name}", model() + lif(V=init), 2, r"P.*V|V.*P", limit=30)
    # Connectivity.
    conns = {
        "prob_above_one": '{ init = "FixedProbability", prob = 1.5 }',
        "prob_negative": '{ init = "FixedProbability", prob = -0.1 }',
        "prob_nan": '{ init = "FixedProbability", prob = nan }',
        "noautapse_prob_above_one": '{ init = "FixedProbabilityNoAutapse", prob = 2.0 }',
        "rowlength_negative": '{ init = "FixedNumberPostWithReplacement", rowLength = -1 }',
        "rowlength_fraction": '{ init = "FixedNumberPostWithReplacement", rowLength = 1.5 }',
        "rowlength_huge": '{ init = "FixedNumberPostWithReplacement", rowLength = 1e12 }',
        "total_negative": '{ init = "FixedNumberTotalWithReplacement", total = -5 }',
        "total_huge": '{ init = "FixedNumberTotalWithReplacement", total = 1e15 }',
        "unknown_init": '{ init = "AllToAll" }',
        "onetoone_with_param": '{ init = "OneToOne", prob = 0.5 }',
    }
    for name, conn in conns.items():
        case(f"conn_{name}", model() + poisson() + lif() + proj(conn=conn), 2, r"\bS\b", limit=30)
    case("conn_onetoone_size_mismatch",
         model() + poisson(size="3") + lif() + proj(conn='{ init = "OneToOne" }'), "0,2",
         r"S", comment="3 sources onto 4 targets one-to-one: valid or refused, never a stray index")
    case("conn_dense_with_connectivity", model() + poisson() + lif() + proj(matrix="dense"), 2,
         r"S.*connectivity|connectivity")
    case("conn_sparse_without_connectivity", model() + poisson() + lif() + proj(conn=""), 2,
         r"S.*connectivity|connectivity")
    case("conn_matrix_unknown", model() + poisson() + lif() + proj(matrix="diagonal"), 2,
         r"matrix")
    case("conn_delay_negative", model() + poisson() + lif() + proj(extra="delay_steps = -1"), 2,
         r"delay_steps")
    case("conn_delay_huge", model() + poisson() + lif() + proj(extra="delay_steps = 4294967295"), 2,
         r"delay")
    case("conn_dendritic_delay_zero",
         model() + poisson() + lif() + proj(extra="max_dendritic_delay_steps = 0"), 2,
         r"max_dendritic_delay_steps")
    case("stdp_param_nan",
         model() + poisson() + lif() +
         proj(wu='{ model = "STDPNearest", params = { tauPlus = nan, tauMinus = 20.0, '
                 'Aplus = 0.01, Aminus = 0.01, Wmin = 0.0, Wmax = 1.0 }, vars = { g = 0.5 } }'),
         2, r"tauPlus")


# ---------------------------------------------------------------------------------------------
# 5. Run length, time step, batch, sizes.

def run_length():
    case("time_dt_zero", model(dt="0.0") + lif(), 2, r"\bdt\b")
    case("time_dt_negative", model(dt="-0.1") + lif(), 2, r"\bdt\b")
    case("time_dt_nan", model(dt="nan") + lif(), 2, r"\bdt\b")
    case("time_dt_inf", model(dt="inf") + lif(), 2, r"\bdt\b")
    case("time_dt_string", model(dt='"fast"') + lif(), 2, r"dt")
    case("time_dt_date", model(dt="1979-05-27") + lif(), 2, r"\bdt\b")
    case("time_dt_tiny", model(dt="1e-300") + lif(), 2, r"(?i)steps|dt|duration",
         comment="5 ms of 1e-300 ms steps: too many steps")
    case("time_duration_zero_config", model(extra="duration_ms = 0.0") + lif(), 2,
         r"duration", args="{config-duration}")
    case("time_duration_below_half_step", model(extra="duration_ms = 0.4") + lif(), 2,
         r"(?i)duration|step", args="{config-duration}")
    case("time_duration_negative_config", model(extra="duration_ms = -5.0") + lif(), 2,
         r"duration", args="{config-duration}")
    case("time_duration_missing", model() + lif(), 2, r"duration", args="{config-duration}")
    case("time_cli_duration_zero", VALID, 2, r"duration", args="--duration-ms 0")
    case("time_cli_duration_tiny", VALID, 2, r"(?i)duration|step", args="--duration-ms 0.1")
    case("time_cli_duration_nan", VALID, 2, r"duration", args="--duration-ms nan")
    case("time_cli_duration_inf", VALID, 2, r"duration", args="--duration-ms inf")
    case("time_cli_duration_huge", VALID, 2, r"(?i)duration|steps", args="--duration-ms 1e300")
    case("time_cli_duration_too_many_steps", VALID, 2, r"(?i)duration|steps",
         args="--duration-ms 1e14", comment="1e14 steps: beyond the documented step limit")
    case("time_cli_duration_text", VALID, 2, r"duration", args="--duration-ms soon")
    case("batch_zero", model(extra="batch = 0") + lif(), 2, r"batch")
    case("batch_negative", model(extra="batch = -2") + lif(), 2, r"batch")
    case("batch_huge", model(extra="batch = 1000000000") + lif(), 2, r"batch")
    case("batch_fraction", model(extra="batch = 1.5") + lif(), 2, r"batch")
    case("batch_cli_zero", VALID, 2, r"batch", args="--batch 0")
    case("batch_cli_huge", VALID, 2, r"batch", args="--batch 4294967295")
    case("threads_negative", VALID, 2, r"threads", args="--threads -1")
    case("seed_negative", model(extra="seed = -1") + lif(), 2, r"seed")
    case("precision_unknown", model(extra='precision = "half"') + lif(), 2, r"precision")
    case("size_zero", model() + lif(size="0"), 2, r"size")
    case("size_negative", model() + lif(size="-4"), 2, r"size")
    case("size_fraction", model() + lif(size="4.5"), 2, r"size")
    case("size_2_pow_32", model() + lif(size="4294967296"), 2, r"size")
    case("size_expression_fraction",
         model() + "[parameters]\nN = 4001\n" + lif(size='"0.8*N"'), 2, r"size")
    case("size_times_batch_overflow", model(extra="batch = 65536") + lif(size="4294967295"), 2,
         r"(?i)P|size|batch", limit=30)
    case("size_sparse_too_big",
         model() + poisson(size="200000") + lif(size="200000") +
         proj(conn='{ init = "FixedNumberPostWithReplacement", rowLength = 100000 }'), "1,2",
         r"\bS\b", limit=60, comment="2e10 sparse synapses: an error naming the projection")
    case("size_dense_too_big",
         model() + poisson(size="200000") + lif(size="200000") +
         proj(matrix="dense", conn=""), "1,2", r"\bS\b",
         limit=60, comment="4e10 dense synapses: an error naming the projection, not bad_alloc")


# ---------------------------------------------------------------------------------------------
# 6. Malformed TOML, wrong types, unknown keys, duplicates, missing pieces.

def toml_syntax():
    base = VALID
    broken = {
        "unterminated_string": model().replace('"hostile"', '"hostile'),
        "unterminated_header": "[model\ndt = 1.0\n" + lif(),
        "brace_header": "[{a]\n" + base,
        "bad_escape": model(name="a\\qb") + lif(),
        "bare_key_space": base + "a b = 1\n",
        "missing_value": base + "x =\n",
        "duplicate_key": model() + "dt = 2.0\n" + lif(),
        "duplicate_table": base + "[model]\ndt = 2.0\n",
        "table_redefines_array": base + "[populations]\nname = 3\n",
        "inline_table_multiline": model() + lif().replace("params = { C = 0.25,", "params = {\nC = 0.25,"),
        "trailing_comma_inline": model() + lif().replace("RefracTime = 0.0 }", "RefracTime = 0.0, }"),
        "invalid_utf8": base + "# \xff\xfe\n",
        "control_char_in_string": model(name="a\x01b") + lif(),
        "binary_garbage": "".join(chr((i * 131 + 7) % 256) for i in range(4096)),
        "only_garbage_header": "\x00\x00\x00\x00",
        "leading_zero_int": model() + lif(size="04"),
        "float_leading_dot": model(dt=".5") + lif(),
        "multiline_key": base + '"a\nb" = 1\n',
        "unclosed_array": model() + lif(size="[1, 2"),
        "unterminated_multiline": model() + "x = '''\nnever closed\n" + lif(),
        "lone_bracket": base + "]\n",
    }
    for name, text in broken.items():
        binary = name in ("invalid_utf8", "binary_garbage", "only_garbage_header")
        case(f"toml_{name}", text, 2, rf"toml_{name}\.toml", binary=binary)
    case("toml_empty", "", 2, r"model")
    case("toml_only_comments", "# nothing here\n# at all\n", 2, r"model")


def schema():
    base = model()
    cases = {
        "populations_not_array": ('populations = "P"\n' + base, r"populations"),
        "populations_table": (base + '[populations]\nname = "P"\n', r"populations"),
        "populations_missing": (base, r"populations"),
        "model_not_table": ('model = 3\n' + lif(), r"model"),
        "model_missing": (lif(), r"model"),
        "unknown_top_level": (VALID + "[modle]\nx = 1\n", r"modle"),
        "unknown_model_key": (model(extra="dtt = 0.1") + lif(), r"dtt"),
        "unknown_pop_key": (base + lif(extra="sise = 4"), r"sise"),
        "unknown_proj_key": (base + poisson() + lif() + proj(extra="delay = 3"), r"delay"),
        "unknown_param": (base + lif(params={"Vth": "-50.0"}), r"Vth"),
        "missing_param": (base + lif(drop=("TauM",)), r"TauM"),
        "unknown_var": (base + lif(V="-65.0, W = 1.0"), r"W"),
        "missing_var": (base + lif().replace(", RefracTime = 0.0", ""), r"RefracTime"),
        "size_string_word": (base + lif(size='"four"'), r"size"),
        "size_bool": (base + lif(size="true"), r"size"),
        "size_array": (base + lif(size="[4]"), r"size"),
        "model_number": (base + lif().replace('model = "LIF"', "model = 5"), r"model"),
        "model_unknown": (base + lif().replace('model = "LIF"', 'model = "LIFF"'), r"LIFF"),
        "params_array": (base + lif().replace(lif().split("\n")[4], "params = [0.25, 20.0]"),
                         r"params"),
        "vars_string": (base + lif().replace("vars = { V = -65.0, RefracTime = 0.0 }",
                                             'vars = "V"'), r"vars"),
        "record_spikes_string": (base + lif(extra='record_spikes = "yes"'), r"record_spikes"),
        "name_missing": (base + lif().replace('name = "P"\n', ""), r"name"),
        "name_number": (base + lif().replace('name = "P"', "name = 7"), r"name"),
        "proj_source_unknown": (base + poisson() + lif() + proj(source="Nope"), r"Nope"),
        "proj_target_unknown": (base + poisson() + lif() + proj(target="Nope"), r"Nope"),
        "proj_missing_postsynaptic": (base + poisson() + lif() + proj().replace(
            'postsynaptic = { model = "DeltaCurr" }\n', ""), r"postsynaptic"),
        "proj_missing_weight_update": (base + poisson() + lif() + proj().replace(
            'weight_update = { model = "StaticPulse", vars = { g = 0.1 } }\n', ""), r"weight_update"),
        "proj_wu_unknown_model": (base + poisson() + lif() + proj(wu='{ model = "StaticPulsee" }'),
                                  r"StaticPulsee"),
        "proj_wu_missing_var": (base + poisson() + lif() + proj(wu='{ model = "StaticPulse" }'),
                                r"g"),
        "proj_ps_neuron_model": (base + poisson() + lif() + proj(ps='{ model = "LIF" }'), r"LIF"),
        "cs_target_unknown": (base + lif() + '[[current_sources]]\nname = "C"\ntarget = "Q"\n'
                              'model = "DC"\nparams = { amp = 0.5 }\n', r"Q"),
        "cs_missing_param": (base + lif() + '[[current_sources]]\nname = "C"\ntarget = "P"\n'
                             'model = "DC"\n', r"amp"),
        "duplicate_population": (base + lif() + lif(), r"P"),
        "duplicate_pop_and_proj": (base + poisson() + lif() + proj(name="P"), r"P"),
        "duplicate_cs_and_pop": (base + lif() + '[[current_sources]]\nname = "P"\ntarget = "P"\n'
                                 'model = "DC"\nparams = { amp = 0.5 }\n', r"P"),
        "user_model_named_builtin": (base + '[neuron_models.LIF]\nparams = []\nvars = ["V"]\n' +
                                     lif(), r"LIF"),
        "user_model_param_twice": (sim("V += 1.0;", params='["tau", "tau"]'), r"tau"),
        "user_model_param_var_same": (sim("V += 1.0;", params='["tau", "V"]',
                                          pvals="{ tau = 10.0, V = 1.0 }"), r"V"),
        "user_model_unknown_key": (sim("V += 1.0;", extra_model='derived_params = ["x"]'),
                                   r"derived_params"),
        "user_model_code_not_string": (base + "[neuron_models.Hack]\nparams = []\nvars = [\"V\"]\n"
                                       "sim_code = 42\n", r"sim_code"),
        "param_circular": (base + '[parameters]\na = "b"\nb = "a"\n' + lif(size='"a"'), r"a|b"),
        "param_self": (base + '[parameters]\na = "a + 1"\n' + lif(size='"a"'), r"a"),
        "param_unknown_name": (base + '[parameters]\nN = 4\n' + lif(size='"M"'), r"M"),
        "param_non_identifier": (base + '[parameters]\n"1x" = 3\n' + lif(), r"1x"),
        "param_bool": (base + '[parameters]\nN = true\n' + lif(size='"N"'), r"N"),
    }
    for name, (text, regex) in cases.items():
        case(f"schema_{name}", text, 2, regex)


def shadowing():
    shadow = {
        "param_dt": ('["tau", "dt"]', '["V"]', "{ tau = 10.0, dt = 1.0 }", "{ V = 0.0 }", r"dt"),
        "param_t": ('["tau", "t"]', '["V"]', "{ tau = 10.0, t = 1.0 }", "{ V = 0.0 }", r"\bt\b"),
        "var_id": ('["tau"]', '["V", "id"]', "{ tau = 10.0 }", "{ V = 0.0, id = 0.0 }", r"\bid\b"),
        "var_t": ('["tau"]', '["V", "t"]', "{ tau = 10.0 }", "{ V = 0.0, t = 0.0 }", r"\bt\b"),
        "var_Isyn": ('["tau"]', '["V", "Isyn"]', "{ tau = 10.0 }", "{ V = 0.0, Isyn = 0.0 }",
                     r"Isyn"),
        "var_batch": ('["tau"]', '["V", "batch"]', "{ tau = 10.0 }", "{ V = 0.0, batch = 0.0 }",
                      r"batch"),
        "param_exp": ('["tau", "exp"]', '["V"]', "{ tau = 10.0, exp = 1.0 }", "{ V = 0.0 }",
                      r"\bexp\b"),
        "var_rand_uniform": ('["tau"]', '["V", "rand_uniform"]', "{ tau = 10.0 }",
                             "{ V = 0.0, rand_uniform = 0.0 }", r"rand_uniform"),
        "var_keyword_int": ('["tau"]', '["V", "int"]', "{ tau = 10.0 }", "{ V = 0.0, int = 0.0 }",
                            r"\bint\b"),
        "var_opencl_global": ('["tau"]', '["V", "global"]', "{ tau = 10.0 }",
                              "{ V = 0.0, global = 0.0 }", r"global"),
        "var_reserved_sf": ('["tau"]', '["V", "sf_rng"]', "{ tau = 10.0 }",
                            "{ V = 0.0, sf_rng = 0.0 }", r"sf_rng"),
        "var_double_underscore": ('["tau"]', '["V", "x__y"]', "{ tau = 10.0 }",
                                  "{ V = 0.0, x__y = 0.0 }", r"x__y"),
    }
    for name, (params, vars_, pvals, vvals, regex) in shadow.items():
        case(f"shadow_{name}", sim("V += 0.0;", params=params, vars_=vars_, pvals=pvals,
                                   vvals=vvals), 2, regex)


# ---------------------------------------------------------------------------------------------
# 7. SpikeSourceArray and files.

def spike_sources():
    ssa = '[[populations]]\nname = "A"\nsize = 3\nmodel = "SpikeSourceArray"\n'
    case("ssa_without_times", model() + ssa + lif() +
         proj(source="A", conn='{ init = "OneToOne" }'), 2, r"A.*spike|spikeTimes|spike_times",
         comment="segfaulted: the spikeTimes EGP cannot be given without spike_times")
    case("ssa_times_negative", model() + ssa + "spike_times = [[1.0], [-2.0], []]\n" + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_nan", model() + ssa + "spike_times = [[1.0], [nan], []]\n" + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_wrong_count", model() + ssa + "spike_times = [[1.0], [2.0]]\n" + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_not_numbers", model() + ssa + 'spike_times = [["a"], [], []]\n' + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_file_missing", model() + ssa + 'spike_times_file = "nope.csv"\n' + lif(), "1,2",
         r"nope\.csv")
    case("ssa_times_file_device", model() + ssa + 'spike_times_file = "/dev/zero"\n' + lif(), 2,
         r"/dev/zero", limit=20)
    case("ssa_times_file_bad_row", model() + ssa + 'spike_times_file = "ssa_times_file_bad_row.csv"\n'
         + lif(), 2, r"ssa_times_file_bad_row\.csv:\d+")
    case("ssa_times_file_neuron_range",
         model() + ssa + 'spike_times_file = "ssa_times_file_neuron_range.csv"\n' + lif(), 2,
         r"ssa_times_file_neuron_range\.csv:\d+")


AUX_FILES = {
    "ssa_times_file_bad_row.csv": "neuron,time_ms\n0,1.0\n1,abc\n",
    "ssa_times_file_neuron_range.csv": "neuron,time_ms\n0,1.0\n7,2.0\n",
    "valid_ssa_file.csv": "neuron,time_ms\n0,1.0\n2,3.0\n1,0.0\n",
}


def files():
    case("record_onto_config", VALID, 2, r"(?i)record|exist|overwrite|force",
         args="--record {config}", comment="the config must stay unchanged")
    case("record_onto_config_dot_path", VALID, 2, r"(?i)record|exist|overwrite|force",
         args="--record ./{config}")
    case("record_onto_existing", VALID, 2, r"(?i)record|exist|overwrite|force",
         args="--record {existing}")
    case("record_onto_directory", VALID, "1,2", r"(?i)record|directory",
         args="--record {tmp}")
    case("record_missing_directory", VALID, "1,2", r"no_such_dir",
         args="--record no_such_dir/out.csv")
    case("set_unknown_parameter", VALID, 2, r"Nq", args="--set Nq=3")
    case("set_nan", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N", args="--set N=nan")
    case("set_inf", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N", args="--set N=inf")
    case("set_huge", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N",
         args="--set N=1e400")
    case("set_text", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N",
         args="--set N=abc")
    case("set_empty", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"set|N",
         args="--set N=")
    case("set_no_name", VALID, 2, r"set", args="--set =4")
    case("cli_unknown_option", VALID, 2, r"--bogus", args="--bogus 1")
    case("cli_unknown_backend", VALID, 2, r"backend", args="--backend nonesuch")


# ---------------------------------------------------------------------------------------------
# 8. Valid configs that look odd: each must run (exit 0).

def valid():
    case("valid_tiny_lif", VALID, 0, "")
    case("valid_record_force", VALID, 0, "", args="--record {existing} --force")
    case("valid_crlf", VALID.replace("\n", "\r\n"), 0, "")
    case("valid_bom", "\ufeff" + VALID, 0, "")
    case("valid_hex_size", model() + lif(size="0x4"), 0, "")
    case("valid_batch_limit", model(extra="batch = 65536") + lif(size="2"), 0, "", limit=60,
         comment="the largest batch the CLI accepts (docs/config.md)")
    case("valid_comment_with_hash",
         sim("// see issue #6: a comment that mentions #define and %: is only a comment\nV += 0.0;"),
         0, "", comment="comments are not code: nothing in them reaches the compiler")
    case("valid_binomial_large_n",
         model() + lif(V='{ init = "Binomial", n = 4000000000, p = 0.5 }'), 0, "", limit=30,
         comment="n = 4e9 took about a minute with the inversion sampler")
    case("valid_normalclipped_narrow",
         model() + lif(V='{ init = "NormalClipped", mean = -65.0, sd = 1.0, min = -65.1, max = -64.9 }'),
         0, "", limit=30)
    case("valid_ssa_inline", model() + '[[populations]]\nname = "A"\nsize = 3\n'
         'model = "SpikeSourceArray"\n'
         "spike_times = [[1.0, 3.0], [], [2.0]]\n" + lif() +
         proj(source="A", conn='{ init = "OneToOne" }'), 0, "")
    case("valid_ssa_file", model() + '[[populations]]\nname = "A"\nsize = 3\n'
         'model = "SpikeSourceArray"\n'
         'spike_times_file = "valid_ssa_file.csv"\n' + lif(), 0, "")
    case("valid_local_array_in_range",
         sim("scalar a[4];\nfor (int i = 0; i < 4; i++) { a[i] = 0.25 * i; }\nV += a[3] * dt / tau;"),
         0, "")


def special_inputs():
    """Inputs that are not TOML files; the runner creates them (see README.md)."""
    ENTRIES.append(("@fifo", None, "2", r"(?i)regular|fifo", "", "20", "a FIFO nobody writes to",
                    False))
    ENTRIES.append(("@dev_zero", None, "2", r"(?i)regular|/dev/zero|device", "", "20",
                    "an endless device", False))
    ENTRIES.append(("@dev_null", None, "2", r"(?i)regular|device", "", "20", "", False))
    ENTRIES.append(("@directory", None, "2", r"(?i)regular|directory", "", "20", "", False))
    ENTRIES.append(("@symlink_to_dev_zero", None, "2", r"(?i)regular|device|zero", "", "20", "",
                    False))
    ENTRIES.append(("@too_large", None, "2", r"(?i)MiB|bytes|limit|too (large|big)", "", "30",
                    "a valid config followed by 17 MiB of comments", False))
    ENTRIES.append(("@cache_path_injection", None, "0", "", "", "60",
                    "SPIKEFORGE_CACHE holds quotes, $(…), backquotes and ';': the compiler must "
                    "run without a shell", False))
    ENTRIES.append(("@missing", None, "1,2", r"(?i)missing\.toml", "", "20", "", False))


