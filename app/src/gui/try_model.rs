//! "Try the model": open or drop an image and see what a run's trained model makes of it.

use std::path::{Path, PathBuf};

use kiln_core::predict::Predictor;

/// The window's state: the loaded model and the last image tried.
#[derive(Debug)]
pub struct TryModel {
    /// The run folder the model comes from.
    pub run: PathBuf,
    predictor: Result<Predictor, String>,
    /// The last image: its file, the texture shown, and the five most likely classes.
    pub result: Option<TryResult>,
}

/// One classified image.
pub struct TryResult {
    /// The file.
    pub path: PathBuf,
    /// The image as the model saw it (resized), or why it could not be read.
    pub outcome: Result<(egui::ColorImage, Vec<(String, f32)>), String>,
    texture: Option<egui::TextureHandle>,
}

impl std::fmt::Debug for TryResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryResult")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl TryModel {
    /// Loads `run`'s model; a failure is kept and shown in the window.
    pub fn open(run: &Path) -> Self {
        Self {
            run: run.to_owned(),
            predictor: Predictor::load(run).map_err(|e| e.to_string()),
            result: None,
        }
    }

    /// Classifies the image at `path`.
    pub fn try_file(&mut self, path: &Path) {
        let outcome = match &self.predictor {
            Err(reason) => Err(reason.clone()),
            Ok(predictor) => image::open(path)
                .map_err(|e| format!("could not read {}: {e}", path.display()))
                .map(|image| {
                    let pixels = predictor.pixels_of(&image);
                    let mut ranked = predictor.classify_pixels(&pixels);
                    ranked.truncate(5);
                    (seen_image(predictor, &pixels), ranked)
                }),
        };
        self.result = Some(TryResult {
            path: path.to_owned(),
            outcome,
            texture: None,
        });
    }
}

/// The model's input as an image for the screen.
fn seen_image(predictor: &Predictor, pixels: &[u8]) -> egui::ColorImage {
    let [_, height, width] = predictor.card().shape;
    let rgba = kiln_core::results::planar_to_rgba(predictor.card().shape, pixels);
    egui::ColorImage::from_rgba_unmultiplied([width, height], &rgba)
}

/// The window's contents: an Open button, dropped files, the image and its top five classes.
pub fn try_model_ui(ui: &mut egui::Ui, state: &mut TryModel) {
    ui.label(format!("Model of {}", state.run.display()));
    if let Err(reason) = &state.predictor {
        ui.colored_label(ui.visuals().error_fg_color, reason);
        return;
    }
    let dropped: Vec<PathBuf> = ui.ctx().input(|i| {
        i.raw
            .dropped_files
            .iter()
            .map(|f| f.path().to_owned())
            .collect()
    });
    if let Some(path) = dropped.first() {
        state.try_file(path);
    }
    ui.horizontal(|ui| {
        if ui
            .button("Open image…")
            .on_hover_text("A PNG or JPEG of any size; it is resized as training images were.")
            .clicked()
            && let Ok(Some(path)) =
                super::files::pick_file("Image to try", "Images", &["png", "jpg", "jpeg"])
        {
            state.try_file(&path);
        }
        ui.label("or drop an image on the window.");
    });
    let Some(result) = &mut state.result else {
        return;
    };
    ui.separator();
    ui.label(result.path.display().to_string());
    match &result.outcome {
        Err(reason) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
        }
        Ok((image, ranked)) => {
            let texture = result.texture.get_or_insert_with(|| {
                ui.ctx()
                    .load_texture("try-model", image.clone(), egui::TextureOptions::NEAREST)
            });
            ui.horizontal_top(|ui| {
                ui.add(egui::Image::new(&*texture).fit_to_exact_size(egui::vec2(112.0, 112.0)))
                    .on_hover_text("The image as the model sees it.");
                ui.vertical(|ui| {
                    for (name, probability) in ranked {
                        ui.add(
                            egui::ProgressBar::new(*probability)
                                .desired_width(200.0)
                                .text(format!("{name}: {:.1} %", probability * 100.0)),
                        );
                    }
                });
            });
        }
    }
}
