//! The test images behind one cell of a confusion matrix ("Shirt taken for T-shirt"). A run
//! keeps no pixels, so they are read back from the data set its config names, split as the run
//! split it (the test split is carved with a fixed seed, so it is the same images), on a named
//! thread; past runs work as well as the one just trained.

use std::sync::mpsc::{self, Receiver, TryRecvError};

use kiln_core::config::ExperimentDraft;
use kiln_core::data;
use kiln_core::results::{TestPredictions, planar_to_rgba};

/// Most images one cell shows.
const MAX_SHOWN: usize = 48;
/// Thumbnails per row.
const COLUMNS: usize = 6;

/// One test image: its position in the test split, side and RGBA pixels.
type CellImage = (usize, [usize; 2], Vec<u8>);

enum Stage {
    Loading(Receiver<Result<Vec<CellImage>, String>>),
    Ready(Vec<(usize, egui::TextureHandle)>),
    Failed(String),
}

/// The window's state: which cell, and its images once read.
pub struct CellImages {
    /// "12 Shirt images taken for T-shirt/top".
    pub title: String,
    /// Images of the cell beyond those shown.
    hidden: usize,
    stage: Stage,
    pending: Option<Vec<CellImage>>,
}

impl CellImages {
    /// Reads the test images that `predictions` put in cell (`truth`, `guess`), from the data
    /// set `config` names, on a thread named `kiln-cell`.
    pub fn open(
        config: ExperimentDraft,
        predictions: &TestPredictions,
        (truth, guess): (u8, u8),
        wake: impl Fn() + Send + 'static,
    ) -> Self {
        let indices: Vec<usize> = (0..predictions.labels.len())
            .filter(|&i| predictions.labels[i] == truth && predictions.predicted[i] == guess)
            .collect();
        let name = |class: u8| {
            predictions
                .class_names
                .get(usize::from(class))
                .cloned()
                .unwrap_or_default()
        };
        let title = match truth == guess {
            true => format!("{} {} images, classified right", indices.len(), name(truth)),
            false => format!(
                "{} {} images taken for {}",
                indices.len(),
                name(truth),
                name(guess)
            ),
        };
        let hidden = indices.len().saturating_sub(MAX_SHOWN);
        let shown: Vec<usize> = indices.into_iter().take(MAX_SHOWN).collect();
        let expected = predictions.labels.clone();
        let (sender, receiver) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("kiln-cell".to_owned())
            .spawn(move || {
                let _ = sender.send(read_test_images(config, &expected, &shown));
                wake();
            });
        let stage = match spawned {
            Ok(_) => Stage::Loading(receiver),
            Err(e) => Stage::Failed(format!("could not start a thread to read the images: {e}")),
        };
        Self {
            title,
            hidden,
            stage,
            pending: None,
        }
    }
}

/// The test split's images at `indices`, after checking that it is the split the predictions
/// were made on (same labels in the same order).
fn read_test_images(
    config: ExperimentDraft,
    expected_labels: &[u8],
    indices: &[usize],
) -> Result<Vec<CellImage>, String> {
    let experiment = config.validate().map_err(|e| e.to_string())?;
    let loaded = data::load(&experiment.dataset, experiment.data_dir.as_deref())
        .map_err(|e| format!("the data set could not be read again: {e}"))?;
    let data = data::make_splits(loaded, &experiment).map_err(|e| e.to_string())?;
    if data.test.labels != expected_labels {
        return Err(
            "the data set changed since this run (its test images are not those it was tested on)"
                .to_owned(),
        );
    }
    let shape = data.shape.chw();
    let per_image = data.shape.pixels_per_image();
    Ok(indices
        .iter()
        .map(|&index| {
            let pixels = data
                .test
                .images
                .get(index * per_image..(index + 1) * per_image)
                .unwrap_or_default();
            (index, [shape[2], shape[1]], planar_to_rgba(shape, pixels))
        })
        .collect())
}

/// The cell's images, a grid of thumbnails each captioned with its test index.
pub fn cell_images_ui(ui: &mut egui::Ui, view: &mut CellImages) {
    if let Stage::Loading(receiver) = &view.stage {
        match receiver.try_recv() {
            Ok(Ok(images)) => view.pending = Some(images),
            Ok(Err(reason)) => view.stage = Stage::Failed(reason),
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                view.stage = Stage::Failed("the thread reading the images ended".to_owned());
            }
        }
    }
    if let Some(images) = view.pending.take() {
        let textures = images
            .into_iter()
            .map(|(index, size, rgba)| {
                let image = egui::ColorImage::from_rgba_unmultiplied(size, &rgba);
                let name = format!("cell-image-{index}");
                (
                    index,
                    ui.ctx()
                        .load_texture(name, image, egui::TextureOptions::NEAREST),
                )
            })
            .collect();
        view.stage = Stage::Ready(textures);
    }
    match &view.stage {
        Stage::Loading(_) => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("reading the images from the data set…");
            });
        }
        Stage::Failed(reason) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
        }
        Stage::Ready(textures) => {
            egui::ScrollArea::vertical()
                .max_height(420.0)
                .show(ui, |ui| {
                    // A grid of fixed columns: wrapped rows would widen the window to the screen.
                    egui::Grid::new("cell-images-grid")
                        .spacing([6.0, 6.0])
                        .show(ui, |ui| {
                            for (n, (index, texture)) in textures.iter().enumerate() {
                                let scale = (64.0 / texture.size_vec2().x).clamp(1.0, 4.0);
                                ui.vertical(|ui| {
                                    ui.image((texture.id(), texture.size_vec2() * scale));
                                    ui.small(format!("#{index}"));
                                });
                                if n % COLUMNS == COLUMNS - 1 {
                                    ui.end_row();
                                }
                            }
                        });
                    if view.hidden > 0 {
                        ui.label(format!("… and {} more", view.hidden));
                    }
                });
        }
    }
}
