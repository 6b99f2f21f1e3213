use super::plan::{MAX_TRIALS, Search, Sweep, Values};
use super::proposals::{PROPOSALS_FILE, Proposer};
use super::stats::{mean_std, student_t_two_sided, welch_p};

const BASE: &str =
    "name = \"tiny\"\nepochs = 1\nlr = 0.01\nseed = 7\n\n[model]\nkind = \"mlp\"\nwidths = [16]\n";

fn sweep(table: &str) -> Result<Sweep, String> {
    Sweep::from_toml(&format!("{BASE}\n[sweep]\n{table}"), "s.toml").map_err(|e| e.to_string())
}

fn settings(sweep: &Sweep) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for trial in &sweep.trials {
        let text = trial.setting_text();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    seen
}

#[test]
fn a_grid_crosses_every_axis_and_repeats_each_setting_over_its_seeds() {
    let sweep = sweep(
        "seeds = 2\nlr = [0.001, 0.1]\ninput_scaling = [\"unit-range\", \"raw\"]\noptimizer.weight_decay = [0.0, 0.0005]\n",
    )
    .unwrap();
    assert_eq!(sweep.spec.search, Search::Grid);
    assert_eq!(sweep.trials.len(), 2 * 2 * 2 * 2);
    assert_eq!(settings(&sweep).len(), 8);
    assert_eq!(
        settings(&sweep)[..2],
        [
            "input_scaling=unit-range lr=0.001 optimizer.weight_decay=0.0",
            "input_scaling=unit-range lr=0.001 optimizer.weight_decay=5e-4"
        ]
    );
    // Seeds are innermost: the base seed, then the next.
    let seeds: Vec<u64> = sweep.trials[..3].iter().map(|t| t.seed).collect();
    assert_eq!(seeds, [7, 8, 7]);
    // A trial's config is the base with its values, its seed and its own name.
    let draft = sweep.draft(&sweep.trials[3]).unwrap();
    assert_eq!((draft.lr, draft.seed), (0.001, 8));
    assert_eq!(
        draft.optimizer.name(),
        "adam",
        "the default optimizer, kept"
    );
    assert_eq!(draft.name, "tiny-t004");
    assert_eq!(draft.input_scaling.to_string(), "unit-range");
    assert_eq!(draft.optimizer.weight_decay(), 0.0005);
    assert_eq!(draft.epochs, 1);
}

#[test]
fn one_at_a_time_changes_each_axis_alone_and_skips_the_base_value() {
    let sweep = sweep(
        "search = \"one-at-a-time\"\nlr = [0.01, 0.1]\ninput_scaling = [\"unit-range\", \"raw\"]\nbatch_size = [32, 128]\n",
    )
    .unwrap();
    // The base (lr 0.01, unit-range by default, batch 64), then each change alone, the axes in
    // the order of their names.
    assert_eq!(
        settings(&sweep),
        [
            "base",
            "batch_size=32",
            "batch_size=128",
            "input_scaling=raw",
            "lr=0.1"
        ]
    );
    let draft = sweep.draft(&sweep.trials[3]).unwrap();
    assert_eq!(
        (draft.lr, draft.input_scaling.to_string()),
        (0.01, "raw".into())
    );
}

#[test]
fn a_random_search_draws_the_same_settings_every_time_within_its_ranges() {
    let table = "search = \"random\"\ntrials = 40\nlr = { min = 0.0001, max = 0.1, log = true }\nbatch_size = { min = 16, max = 256 }\ninit = [\"glorot-uniform\", \"pytorch-default\"]\n";
    let first = sweep(table).unwrap();
    let again = sweep(table).unwrap();
    assert_eq!(first.trials, again.trials);
    assert_eq!(first.trials.len(), 40);
    let (mut below_1e3, mut inits) = (0, std::collections::BTreeSet::new());
    for trial in &first.trials {
        let draft = first.draft(trial).unwrap();
        assert!((0.0001..=0.1).contains(&draft.lr), "{}", draft.lr);
        assert!((16..=256).contains(&draft.batch_size));
        below_1e3 += usize::from(draft.lr < 0.001);
        inits.insert(draft.init.to_string());
    }
    // Log-uniform: a third of the draws lie in the lowest of its three decades.
    assert!(
        (5..=25).contains(&below_1e3),
        "{below_1e3} of 40 below 1e-3"
    );
    assert_eq!(inits.len(), 2);
    let lr = first.spec.axes.iter().find(|a| a.key == "lr").unwrap();
    assert!(lr.is_log());
}

#[test]
fn a_tpe_search_plans_its_random_start_and_proposes_the_rest_from_results_kept_in_the_folder() {
    let table = "search = \"tpe\"\ntrials = 6\nstartup_trials = 3\nseeds = 2\nlr = { min = 0.0001, max = 0.1, log = true }\noptimizer.weight_decay = [0.0, 0.0005]\n";
    let mut sweep = sweep(table).unwrap();
    assert_eq!(
        sweep.trials.len(),
        3 * 2,
        "the random start, each over its seeds"
    );
    assert_eq!(sweep.proposals_left(), 3);
    assert!(
        sweep.describe().contains("12 trial(s): tpe search"),
        "{}",
        sweep.describe()
    );
    let folder = kiln_test_support::scratch_dir("tpe-proposals");
    let mut proposer = Proposer::new(&sweep, &folder, &[]);
    // The first setting scored best: the proposal is drawn near it.
    for (index, score) in [
        (1, 0.9),
        (2, 0.88),
        (3, 0.5),
        (4, 0.52),
        (5, 0.3),
        (6, 0.31),
    ] {
        proposer.record(index, Some(score));
    }
    assert_eq!(proposer.settings_with_results(), 3);
    let trials = proposer
        .propose()
        .unwrap()
        .expect("three settings are left to propose");
    assert_eq!(
        trials.iter().map(|t| (t.index, t.seed)).collect::<Vec<_>>(),
        [(7, 7), (8, 8)]
    );
    for trial in &trials {
        let draft = sweep.draft(trial).unwrap();
        assert!((0.0001..=0.1).contains(&draft.lr));
    }
    // The folder keeps it: a resumed sweep plans the same trial 7 and proposes from there.
    super::proposals::read_proposals(&mut sweep, &folder).unwrap();
    assert_eq!(sweep.trials.len(), 8);
    assert_eq!(sweep.trials[6], trials[0]);
    assert_eq!(sweep.proposals_left(), 2);
    std::fs::write(folder.join(PROPOSALS_FILE), "[[proposal]]\nlr = 0.01\n").unwrap();
    let mut again = self::sweep(table).unwrap();
    let error = super::proposals::read_proposals(&mut again, &folder)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("proposal 1 has no `optimizer.weight_decay`"),
        "{error}"
    );
    assert!(error.contains("move it away to propose afresh"), "{error}");
}

#[test]
fn a_range_in_a_grid_is_spaced_by_its_steps_on_its_scale() {
    let sweep = sweep("lr = { min = 0.001, max = 0.1, log = true, steps = 3 }\n").unwrap();
    let rates: Vec<f64> = sweep
        .trials
        .iter()
        .map(|t| sweep.draft(t).unwrap().lr)
        .collect();
    assert_eq!(rates, [0.001, 0.01, 0.1]);
    assert!(matches!(
        sweep.spec.axes[0].values,
        Values::Range { steps: Some(3), .. }
    ));
}

#[test]
fn a_sweep_that_cannot_run_is_refused_in_a_sentence_naming_what_to_change() {
    for (table, expected) in [
        ("", "varies nothing"),
        ("lr = 0.1\n", "`lr = 0.1` is one value"),
        ("lr = []\n", "`lr` has no values"),
        (
            "lr = { min = 0.001, max = 0.1 }\n",
            "only a random or tpe search draws from a range",
        ),
        ("search = \"random\"\nlr = [0.1]\n", "needs trials = N"),
        (
            "search = \"tpe\"\nlr = [0.1]\n",
            "a tpe search needs trials = N",
        ),
        (
            "trials = 4\nstartup_trials = 2\nlr = [0.1]\n",
            "startup_trials belongs to search = \"tpe\"",
        ),
        (
            "search = \"tpe\"\ntrials = 4\nstartup_trials = 5\nlr = [0.1]\n",
            "`startup_trials` must be a whole number from 1 to 4",
        ),
        (
            "search = \"bayes\"\nlr = [0.1]\n",
            "use \"grid\", \"random\", \"one-at-a-time\" or \"tpe\"",
        ),
        (
            "seeds = 0\nlr = [0.1]\n",
            "`seeds` must be a whole number from 1 to 100",
        ),
        (
            "lr = { min = 0.0, max = 0.1, log = true, steps = 2 }\n",
            "must stay above 0",
        ),
        ("lr = [0.1, -1.0]\n", "trial 2 (lr=-1.0):"),
        ("learning_rate = [0.1]\n", "trial 1 (learning_rate=0.1):"),
        (
            "lr = { min = 0.001, max = 0.1, steps = 101 }\nbatch_size = { min = 1, max = 100, steps = 100 }\n",
            &format!("more than {MAX_TRIALS} settings"),
        ),
    ] {
        let error = sweep(table).unwrap_err();
        assert!(error.contains(expected), "{table:?}: {error}");
        assert!(error.starts_with("s.toml: "), "{error}");
    }
    let error = Sweep::from_toml(BASE, "s.toml").unwrap_err().to_string();
    assert!(error.contains("it has no [sweep] table"), "{error}");
}

#[test]
fn student_t_tail_probabilities_match_the_printed_tables() {
    // Two-sided critical values: t(0.975, df) from any statistics table.
    for (t, df, p) in [
        (2.228, 10.0, 0.05),
        (12.706, 1.0, 0.05),
        (2.576, 1e6, 0.01),
        (1.812, 10.0, 0.10),
    ] {
        let got = student_t_two_sided(t, df);
        assert!((got - p).abs() < 2e-4, "t = {t}, df = {df}: {got}");
    }
    assert!((student_t_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
}

#[test]
fn welch_tells_a_gap_from_seed_noise_and_says_when_it_cannot() {
    // Welch's example values, computed by hand: means 20.82 and 22.99, t = -2.46, p ≈ 0.02.
    let a = [
        27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
    ];
    let b = [
        27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
    ];
    let p = welch_p(&a, &b).unwrap();
    assert!((p - 0.0211).abs() < 0.002, "{p}");
    let noise = welch_p(&[0.81, 0.83, 0.82], &[0.82, 0.80, 0.84]).unwrap();
    assert!(noise > 0.5, "{noise}");
    assert_eq!(welch_p(&[0.8], &[0.7, 0.71]), None);
    assert_eq!(welch_p(&[0.5, 0.5], &[0.5, 0.5]), Some(1.0));
    let (mean, std) = mean_std(&[2.0, 4.0, 6.0]).unwrap();
    assert_eq!((mean, std), (4.0, 2.0));
}

#[test]
fn the_shipped_sweep_plans_a_grid_of_its_four_settings_over_three_seeds() {
    let text = include_str!("../../../assets/sweeps/fashion-mlp-scaling.toml");
    let sweep = Sweep::from_toml(text, "fashion-mlp-scaling.toml").unwrap();
    assert_eq!(sweep.trials.len(), 12);
    assert_eq!(settings(&sweep).len(), 4);
    assert!(
        sweep.describe().starts_with(
            "12 trial(s): grid search over input_scaling (2) × lr (2), 3 seed(s) each"
        )
    );
}

#[test]
fn explain_lists_every_difference_defaults_included_and_a_new_kind_as_one() {
    use crate::config::differences;
    let a = crate::config::ExperimentDraft::from_toml(BASE, "a").unwrap();
    let b = crate::config::ExperimentDraft::from_toml(
        "name = \"other\"\nepochs = 1\nlr = 0.1\nseed = 3\ninput_scaling = \"raw\"\ndevice = \"cpu\"\n\n[model]\nkind = \"cnn\"\n\n[optimizer]\nkind = \"adam\"\nepsilon = 1e-7\n",
        "b",
    )
    .unwrap();
    let all = differences(&a, &b);
    assert!(all.a_only.is_empty() && all.unused.is_empty(), "{all:#?}");
    let found: Vec<String> = all.causes.iter().map(|d| d.describe()).collect();
    // The name, the seed and the device say nothing about what is learnt; Adam's epsilon
    // differs from the default A never wrote; another model kind is one difference.
    assert_eq!(found.len(), 4, "{found:#?}");
    assert_eq!(found[0], "input_scaling (unit-range → raw)");
    assert_eq!(found[1], "lr (0.01 → 0.1)");
    assert!(
        found[2].starts_with("model ({") && found[2].ends_with("→ { kind = \"cnn\" })"),
        "{}",
        found[2]
    );
    assert_eq!(found[3], "optimizer.epsilon (1e-8 → 1e-7)");
}

#[test]
fn explain_names_framework_defaults_neither_model_uses_and_leaves_them_off_the_path() {
    use crate::config::differences;
    let keras = |model: &str| {
        crate::config::ExperimentDraft::from_toml(
            &format!(
                "init = \"glorot-uniform\"\nbatch_norm_momentum = 0.01\nbatch_norm_epsilon = 0.001\nconv_padding = \"same\"\nresize = \"bilinear\"\n[model]\nkind = \"{model}\"\n"
            ),
            "keras",
        )
        .unwrap()
    };
    let pytorch = |model: &str| {
        crate::config::ExperimentDraft::from_toml(
            &format!("[model]\nkind = \"{model}\"\n"),
            "pytorch",
        )
        .unwrap()
    };
    let keys = |found: &[super::Difference]| -> Vec<String> {
        found.iter().map(|d| d.key.clone()).collect()
    };
    // Two MLPs on built-in data: only the dense layers' init can change a figure.
    let mlps = differences(&pytorch("mlp"), &keras("mlp"));
    assert_eq!(keys(&mlps.causes), ["init"]);
    assert_eq!(
        keys(&mlps.unused),
        [
            "batch_norm_epsilon",
            "batch_norm_momentum",
            "conv_padding",
            "resize"
        ]
    );
    // ResNet-18 has batch norm and strided convolutions: those now count; a folder is still
    // not read, so the resize does not.
    let resnets = differences(&pytorch("resnet18"), &keras("resnet18"));
    assert_eq!(
        keys(&resnets.causes),
        [
            "batch_norm_epsilon",
            "batch_norm_momentum",
            "conv_padding",
            "init"
        ]
    );
    assert_eq!(keys(&resnets.unused), ["resize"]);
}

#[test]
fn the_explain_path_runs_a_b_each_difference_alone_and_all_but_each() {
    let sweep = sweep(
        "search = \"explain\"\nseeds = 2\nlr = [0.1]\ninput_scaling = [\"raw\"]\nbatch_size = [32]\n",
    )
    .unwrap();
    assert_eq!(
        settings(&sweep),
        [
            "base",
            "batch_size=32 input_scaling=raw lr=0.1",
            "batch_size=32",
            "input_scaling=raw lr=0.1",
            "input_scaling=raw",
            "batch_size=32 lr=0.1",
            "lr=0.1",
            "batch_size=32 input_scaling=raw",
        ]
    );
    assert_eq!(sweep.trials.len(), 16);
    let error = super::plan::Sweep::from_toml(
        &format!("{BASE}\n[sweep]\nsearch = \"explain\"\nlr = [0.1, 0.2]\n"),
        "s.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("needs exactly one value"), "{error}");
}

#[test]
fn a_change_over_seeds_has_welchs_interval_and_test() {
    use super::explain::Change;
    let change = Change::between(&[0.80, 0.82, 0.81], &[0.90, 0.92, 0.91]).unwrap();
    assert!((change.mean - 0.10).abs() < 1e-12);
    // Equal spreads of 0.01 over 3 seeds: se = 0.01·√(2/3), df = 4, t(0.975, 4) = 2.776.
    let expected = 2.776 * 0.01 * (2.0f64 / 3.0).sqrt();
    assert!(
        (change.half_width.unwrap() - expected).abs() < 1e-4,
        "{change:?}"
    );
    assert!(!change.within_noise());
    assert_eq!(change.points(), "+10.00 ± 2.27 points");
    let one = Change::between(&[0.8], &[0.9]).unwrap();
    assert_eq!(one.points(), "+10.00 points (one seed: no interval)");
}

#[test]
fn a_sweeps_table_sorts_best_first_by_the_chosen_figure_and_rows_without_it_last() {
    use super::report::{SortBy, Spread};
    let text = "name = \"t\"\nepochs = 1\n\n[sweep]\nlr = [0.001, 0.01, 0.1]\n";
    let sweep = Sweep::from_toml(text, "t.toml").unwrap();
    let mut report = super::SweepReport::of(&sweep, std::path::Path::new("t"), &[None, None, None]);
    let spread = |mean| Some(Spread { mean, std: 0.0 });
    for (row, (accuracy, secs)) in report.rows.iter_mut().zip([(0.8, 3.0), (0.9, 2.0)]) {
        row.val_accuracy = spread(accuracy);
        row.epoch_secs = spread(secs);
        row.val_loss = spread(accuracy);
        row.samples_per_sec = spread(1.0 / secs);
    }
    let order = |by: SortBy| -> Vec<String> {
        report
            .sorted_rows(by)
            .iter()
            .map(|r| r.setting.clone())
            .collect()
    };
    assert_eq!(order(SortBy::Plan), ["lr=0.001", "lr=0.01", "lr=0.1"]);
    assert_eq!(order(SortBy::Validation), ["lr=0.01", "lr=0.001", "lr=0.1"]);
    assert_eq!(order(SortBy::EpochSecs), ["lr=0.01", "lr=0.001", "lr=0.1"]);
    assert_eq!(order(SortBy::Throughput), ["lr=0.01", "lr=0.001", "lr=0.1"]);
    assert_eq!(order(SortBy::ValLoss), ["lr=0.001", "lr=0.01", "lr=0.1"]);
    assert_eq!(
        order(SortBy::Test),
        ["lr=0.001", "lr=0.01", "lr=0.1"],
        "no test figures: plan order"
    );
    // Sorted in place, the CSV lists the rows in that order too.
    report.sort(SortBy::Validation);
    let csv = report.to_csv();
    let first = csv.lines().nth(1).unwrap();
    assert!(first.starts_with("\"lr=0.01\""), "{first}");
    assert_eq!("secs".parse::<SortBy>(), Ok(SortBy::EpochSecs));
    let refusal = "fastest".parse::<SortBy>().unwrap_err();
    assert!(refusal.contains("val-loss"), "{refusal}");
}
