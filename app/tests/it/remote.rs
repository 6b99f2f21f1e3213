//! Training on another machine's device: a real `kiln serve` on loopback hosting the CPU (Burn's
//! flex backend), and `kiln train --device remote:…` against it, as two shells would run them.

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kiln_test_support::scratch_dir;

const TOKEN: &str = "loopback-test-token";

/// A `kiln serve` child process, killed when dropped; `log` receives its stdout lines.
struct KilnBox {
    child: Child,
    address: String,
    log: mpsc::Receiver<String>,
}

impl KilnBox {
    /// Serves the CPU on a free loopback port with the token in a file.
    fn start(scratch: &Path) -> Self {
        Self::hosting(scratch, &["--device", "cpu"])
    }

    /// Serves what `devices` (kiln serve's flags) name on a free loopback port.
    fn hosting(scratch: &Path, devices: &[&str]) -> Self {
        let token_file = scratch.join("box.token");
        std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .arg("serve")
            .args(devices)
            .args(["--listen", "127.0.0.1:0", "--token-file"])
            .arg(&token_file)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the kiln binary runs");
        let (lines, log) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut this = Self {
            child,
            address: String::new(),
            log,
        };
        let line = this.wait_for_line("Kiln serves on ");
        this.address = line
            .trim_start_matches("Kiln serves on ")
            .trim_end_matches(". On the client:")
            .to_owned();
        this
    }

    /// The first line of the box's log that starts with `start` (earlier ones are dropped).
    fn wait_for_line(&self, start: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.log.recv_timeout(left) {
                Ok(line) if line.starts_with(start) => return line,
                Ok(_) => {}
                Err(e) => panic!("kiln serve printed no line starting {start:?}: {e}"),
            }
        }
    }

    fn device(&self) -> String {
        format!("remote:{}/0", self.address)
    }
}

impl Drop for KilnBox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `kiln train` on `device` with a small seeded MLP on the built-in data.
fn train(device: &str, runs: &Path, epochs: &str) -> Command {
    train_on(&["--device", device], runs, epochs)
}

/// `kiln train` on the devices `flags` name, otherwise as [`train`].
fn train_on(flags: &[&str], runs: &Path, epochs: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kiln"));
    command
        .arg("train")
        .args(flags)
        .args(["--model", "mlp:32", "--epochs", epochs])
        .args(["--batch", "64", "--seed", "7", "--runs-dir"])
        .arg(runs)
        // No token remembered from the machine's own user.
        .env("XDG_CONFIG_HOME", runs.join("no-config"))
        .env_remove("KILN_REMOTE_TOKEN");
    command
}

fn run(mut command: Command) -> Output {
    command.output().expect("the kiln binary runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn run_folder(runs: &Path) -> Option<PathBuf> {
    std::fs::read_dir(runs)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("config.toml").is_file())
}

/// epochs.csv's data rows as numbers (empty cells left out).
fn epoch_rows(folder: &Path) -> Vec<Vec<f64>> {
    learning_columns(folder, |_| true)
}

/// How many rows epochs.csv holds so far: 0 while the run has written its config.toml but not
/// yet created epochs.csv (a poll can land between the two; CI once did).
fn rows_written_yet(folder: &Path) -> usize {
    std::fs::read_to_string(folder.join("epochs.csv"))
        .map_or(0, |text| text.lines().skip(1).count())
}

/// The cells of epochs.csv's columns whose header `keep` takes, row by row, as numbers.
fn learning_columns(folder: &Path, keep: impl Fn(&str) -> bool) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(folder.join("epochs.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    lines
        .map(|line| {
            line.split(',')
                .zip(&header)
                .filter(|(_, name)| keep(name))
                .filter_map(|(cell, _)| cell.parse().ok())
                .collect()
        })
        .collect()
}

#[test]
fn a_run_on_a_remote_cpu_equals_the_same_run_on_the_local_cpu() {
    let scratch = scratch_dir("remote-equal");
    let kiln_box = KilnBox::start(&scratch);
    let remote_runs = scratch.join("remote");
    let mut remote = train(&kiln_box.device(), &remote_runs, "2");
    remote.env("KILN_REMOTE_TOKEN", TOKEN);
    let output = run(remote);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        kiln_box
            .wait_for_line("127.0.0.1:")
            .contains("opened a session on device 0")
    );

    let local_runs = scratch.join("local");
    let output = run(train("cpu", &local_runs, "2"));
    assert!(output.status.success(), "{}", text(&output));

    let remote_folder = run_folder(&remote_runs).unwrap();
    // The box sums on its own threads, so the last bits of a loss may differ, nothing more.
    assert_same_learning(&remote_folder, &run_folder(&local_runs).unwrap(), 1e-3);
    assert_eq!(epoch_rows(&remote_folder).len(), 2);
    let summary = std::fs::read_to_string(remote_folder.join("summary.json")).unwrap();
    assert!(summary.contains("\"completed\""), "{summary}");
    // The run names the box's adapter, as the box described it.
    assert!(
        summary.contains("CPU (") && summary.contains(&format!(" on {}", kiln_box.address)),
        "{summary}"
    );
}

/// Losses and accuracies of two run folders agree row by row within `tolerance` (relative).
fn assert_same_learning(a: &Path, b: &Path, tolerance: f64) {
    // The timing columns differ by design.
    let learned = |name: &str| name.ends_with("_loss") || name.ends_with("_accuracy");
    let (a_rows, b_rows) = (learning_columns(a, learned), learning_columns(b, learned));
    assert!(!a_rows.is_empty());
    assert_eq!(a_rows.len(), b_rows.len());
    for (a, b) in a_rows.iter().zip(&b_rows) {
        assert_eq!(a.len(), b.len(), "{a:?} {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= tolerance * y.abs().max(1.0),
                "{a:?} against {b:?}"
            );
        }
    }
}

#[test]
fn two_devices_of_a_box_in_data_parallel_learn_what_one_device_learns_on_the_same_batch() {
    let scratch = scratch_dir("remote-parallel");
    let kiln_box = KilnBox::hosting(&scratch, &["--devices", "cpu,cpu"]);
    let both = format!("remote:{0}/0,remote:{0}/1", kiln_box.address);
    let parallel_runs = scratch.join("parallel");
    let mut parallel = train_on(&["--devices", &both], &parallel_runs, "2");
    parallel.env("KILN_REMOTE_TOKEN", TOKEN);
    let output = run(parallel);
    assert!(output.status.success(), "{}", text(&output));
    for device in ["device 0", "device 1"] {
        assert!(
            kiln_box
                .wait_for_line("127.0.0.1:")
                .contains(&format!("opened a session on {device}"))
        );
    }

    let single_runs = scratch.join("single");
    let output = run(train("cpu", &single_runs, "2"));
    assert!(output.status.success(), "{}", text(&output));

    // Each device takes half of every batch of 64 and the gradients are summed: the same step
    // as one device's on all 64, up to the order of float sums.
    let parallel_folder = run_folder(&parallel_runs).unwrap();
    assert_same_learning(&parallel_folder, &run_folder(&single_runs).unwrap(), 2e-3);
    let summary = std::fs::read_to_string(parallel_folder.join("summary.json")).unwrap();
    assert!(summary.contains("\"completed\""), "{summary}");
    let config = std::fs::read_to_string(parallel_folder.join("config.toml")).unwrap();
    assert!(config.contains("data_parallel"), "{config}");

    // Devices of different kinds, or one twice, are refused before anything is connected.
    for (devices, said) in [
        (
            format!("{both},gpu:0"),
            "all gpu:N, all cuda:N or all devices of one box",
        ),
        (
            format!("remote:{0}/0,remote:{0}/0", kiln_box.address),
            "is listed twice",
        ),
        ("cpu,gpu:0".to_owned(), "the CPU is one device"),
    ] {
        let output = run(train_on(
            &["--devices", &devices],
            &scratch.join("refused"),
            "1",
        ));
        assert!(!output.status.success());
        assert!(text(&output).contains(said), "{}", text(&output));
    }
    assert!(run_folder(&scratch.join("refused")).is_none());
}

#[test]
fn a_wrong_or_missing_token_is_refused_before_a_run_folder_exists() {
    let scratch = scratch_dir("remote-token");
    let kiln_box = KilnBox::start(&scratch);
    let runs = scratch.join("runs");

    let mut wrong = train(&kiln_box.device(), &runs, "1");
    wrong.env("KILN_REMOTE_TOKEN", "not-the-token");
    let output = run(wrong);
    assert!(!output.status.success());
    assert!(
        text(&output).contains("refused the token"),
        "{}",
        text(&output)
    );
    assert!(
        kiln_box
            .wait_for_line("refused ")
            .contains("wrong or missing token")
    );

    let output = run(train(&kiln_box.device(), &runs, "1"));
    assert!(!output.status.success());
    assert!(
        text(&output).contains(&format!("no token for {}", kiln_box.address)),
        "{}",
        text(&output)
    );
    assert!(
        run_folder(&runs).is_none(),
        "no folder for a run that never started"
    );

    // A device the box does not host is named with how many it does.
    let mut missing = train(&format!("remote:{}/3", kiln_box.address), &runs, "1");
    missing.env("KILN_REMOTE_TOKEN", TOKEN);
    let output = run(missing);
    assert!(
        text(&output).contains("hosts 1 device(s)"),
        "{}",
        text(&output)
    );
}

#[test]
fn kiln_devices_lists_a_box_by_its_adapters_and_remembers_its_token_for_its_user_alone() {
    let scratch = scratch_dir("remote-devices");
    let kiln_box = KilnBox::start(&scratch);
    let config = scratch.join("config");
    let devices = |remember: bool, token: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kiln"));
        command
            .args(["devices", "--remote", &kiln_box.address])
            .env("XDG_CONFIG_HOME", &config)
            // The file, not the keyring of whoever runs the tests.
            .env("KILN_KEYRING", "off")
            .env_remove("KILN_REMOTE_TOKEN");
        if remember {
            command.arg("--remember");
        }
        if let Some(token) = token {
            command.env("KILN_REMOTE_TOKEN", token);
        }
        run(command)
    };
    let output = devices(true, Some(TOKEN));
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains(&kiln_box.device()),
        "{}",
        text(&output)
    );
    // Remembered: no variable needed any more.
    let output = devices(false, None);
    assert!(output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("remote device"), "{}", text(&output));
    // The box says what it hosts: here its CPU, named as `kiln devices` names it on the box.
    let on_box = format!(" on {}", kiln_box.address);
    let listed = text(&output);
    assert!(
        listed
            .lines()
            .any(|line| line.contains("CPU (") && line.ends_with(&on_box)),
        "{listed}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = std::fs::read_dir(config.join("kiln").join("remotes"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    }
}

#[test]
fn a_box_killed_mid_run_fails_the_run_keeps_its_rows_and_it_resumes_on_the_local_cpu() {
    let scratch = scratch_dir("remote-killed");
    let mut kiln_box = KilnBox::start(&scratch);
    let runs = scratch.join("runs");
    let mut command = train(&kiln_box.device(), &runs, "500");
    command
        .env("KILN_REMOTE_TOKEN", TOKEN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut client = command.spawn().unwrap();

    let deadline = Instant::now() + Duration::from_secs(120);
    let folder = loop {
        assert!(Instant::now() < deadline, "no epoch row within two minutes");
        if let Some(folder) = run_folder(&runs)
            && rows_written_yet(&folder) >= 2
        {
            break folder;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    kiln_box.child.kill().unwrap();
    kiln_box.child.wait().unwrap();

    // The client must notice on its own, not hang.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = client.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = client.kill();
            panic!("the client still runs two minutes after its box was killed");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut client.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: the connection to the box at {} was lost",
            kiln_box.address
        )),
        "{stderr}"
    );
    assert!(stderr.contains("--resume"), "{stderr}");
    let kept = epoch_rows(&folder);
    assert!(kept.len() >= 2, "every row so far is kept");
    let summary = std::fs::read_to_string(folder.join("summary.json")).unwrap();
    assert!(summary.contains("\"failed\""), "{summary}");

    // The way out: go on from the last checkpoint on this machine's CPU.
    let mut resume = Command::new(env!("CARGO_BIN_EXE_kiln"));
    resume
        .args(["train", "--resume"])
        .arg(&folder)
        .args(["--device", "cpu"]);
    let started = Instant::now();
    let mut resumed = resume
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // 500 epochs would take too long: a few more rows prove it goes on, then it is stopped.
    loop {
        if epoch_rows(&folder).len() > kept.len() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the resumed run wrote no row"
        );
        assert!(resumed.try_wait().unwrap().is_none(), "the resume ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = resumed.kill();
    let _ = resumed.wait();
}

#[test]
fn a_sweep_spreads_its_trials_over_the_local_cpu_and_a_box_one_trial_each_at_a_time() {
    let scratch = scratch_dir("remote-sweep");
    let kiln_box = KilnBox::start(&scratch);
    let config = scratch.join("spread.toml");
    std::fs::write(
        &config,
        "name = \"spread\"\ndevice = \"cpu\"\nepochs = 1\nbatch_size = 64\nseed = 7\n\n[model]\nkind = \"mlp\"\nwidths = [32]\n\n[sweep]\nlr = [0.001, 0.002, 0.005, 0.01]\n",
    )
    .unwrap();
    let devices = format!("cpu,{}", kiln_box.device());
    let output = run({
        let mut command = Command::new(env!("CARGO_BIN_EXE_kiln"));
        command
            .arg("sweep")
            .arg(&config)
            .args(["--devices", &devices, "--sweeps-dir"])
            .arg(scratch.join("sweeps"))
            .env("XDG_CONFIG_HOME", scratch.join("no-config"))
            .env("KILN_REMOTE_TOKEN", TOKEN);
        command
    });
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    let on = |device: &str| said.matches(&format!(": started on {device}")).count();
    let (local, remote) = (on("cpu"), on("remote:"));
    assert_eq!(local + remote, 4, "{said}");
    assert!(
        local >= 1 && remote >= 1,
        "both devices took trials: {said}"
    );
    assert!(
        kiln_box
            .wait_for_line("127.0.0.1:")
            .contains("opened a session on device 0")
    );
    // Every trial completed, wherever it ran, and the box's trials name it.
    let sweep = std::fs::read_dir(scratch.join("sweeps"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let summaries: Vec<String> = std::fs::read_dir(&sweep)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("summary.json"))
        .filter(|p| p.is_file())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(summaries.len(), 4);
    assert!(summaries.iter().all(|s| s.contains("\"completed\"")));
    let on_box = summaries
        .iter()
        .filter(|s| s.contains(&format!(" on {}", kiln_box.address)))
        .count();
    assert_eq!(on_box, remote, "{summaries:?}");
}
