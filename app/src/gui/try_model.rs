//! "Try the model": open or drop an image and see what a run's trained model makes of it.

use std::path::{Path, PathBuf};

use kiln_core::data::files::FileTree;
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
    /// The file's path, or its name where a page was handed its bytes.
    pub name: String,
    /// The image as the model saw it (resized), or why it could not be read.
    pub outcome: Result<(egui::ColorImage, Vec<(String, f32)>), String>,
    texture: Option<egui::TextureHandle>,
}

impl std::fmt::Debug for TryResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryResult")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TryModel {
    /// Loads `run`'s model from `tree` (the disk, or a page's runs); a failure is kept and
    /// shown in the window.
    pub fn open(tree: &dyn FileTree, run: &Path) -> Self {
        Self {
            run: run.to_owned(),
            predictor: Predictor::load_in(tree, run).map_err(|e| e.to_string()),
            result: None,
        }
    }

    /// The loaded model, unless it could not be loaded.
    pub fn predictor(&self) -> Option<&Predictor> {
        self.predictor.as_ref().ok()
    }

    /// Classifies the image file at `path`.
    pub fn try_file(&mut self, path: &Path) {
        match std::fs::read(path) {
            Ok(bytes) => self.try_bytes(&path.display().to_string(), &bytes),
            Err(e) => self.show(
                path.display().to_string(),
                Err(format!("could not read {}: {e}", path.display())),
            ),
        }
    }

    /// Classifies the image whose file, called `name`, holds `bytes` (PNG, JPEG, WebP, BMP, GIF
    /// or TIFF).
    pub fn try_bytes(&mut self, name: &str, bytes: &[u8]) {
        let outcome = match &self.predictor {
            Err(reason) => Err(reason.clone()),
            // Decoded as `kiln predict` and folder data sets decode files: a phone photo is
            // turned upright by its EXIF orientation, as training saw it.
            Ok(predictor) => predictor.pixels_of_bytes(name, bytes).map(|pixels| {
                let mut ranked = predictor.classify_pixels(&pixels);
                ranked.truncate(5);
                (seen_image(predictor, &pixels), ranked)
            }),
        };
        self.show(name.to_owned(), outcome);
    }

    fn show(
        &mut self,
        name: String,
        outcome: Result<(egui::ColorImage, Vec<(String, f32)>), String>,
    ) {
        self.result = Some(TryResult {
            name,
            outcome,
            texture: None,
        });
    }
}

/// The model's input as an image for the screen.
fn seen_image(predictor: &Predictor, pixels: &[u8]) -> egui::ColorImage {
    let [_, height, width] = predictor.card().shape;
    let rgba = kiln_core::pixels::planar_to_rgba(predictor.card().shape, pixels);
    egui::ColorImage::from_rgba_unmultiplied([width, height], &rgba)
}

/// The window's contents: an Open button, dropped files, the image and its top five classes.
pub fn try_model_ui(ui: &mut egui::Ui, state: &mut TryModel) {
    ui.label(format!("Model of {}", state.run.display()));
    if let Err(reason) = &state.predictor {
        ui.colored_label(ui.visuals().error_fg_color, reason);
        return;
    }
    if let Some(file) = ui.ctx().input(|i| i.raw.dropped_files.first().cloned()) {
        take_dropped(ui.ctx(), state, file);
    }
    ui.horizontal(|ui| {
        if ui
            .button("Open image…")
            .on_hover_text("A PNG, JPEG, WebP, BMP, GIF or TIFF of any size; it is resized as training images were.")
            .clicked()
        {
            open_image(ui.ctx(), state);
        }
        ui.label("or drop an image on the window.");
    });
    let Some(result) = &mut state.result else {
        return;
    };
    ui.separator();
    ui.label(&result.name);
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

/// Asks for an image to try: the desktop's dialog answers now; a page's chooser delivers the
/// file later (`files::arrived_files`).
fn open_image(ctx: &egui::Context, state: &mut TryModel) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = ctx;
        if let Some(path) =
            super::files::pick_file("Image to try", "Images", kiln_core::data::IMAGE_EXTENSIONS)
        {
            state.try_file(&path);
        }
    }
    #[cfg(target_arch = "wasm32")]
    if let Err(reason) = super::files::choose_file(super::files::FileChoice::ImageToTry, ctx) {
        state.show("no image".to_owned(), Err(reason));
    }
}

/// Tries a file dropped on the window: read at once on a desktop; in a page the browser reads
/// it first and it arrives like a chosen one (`files::arrived_files`).
fn take_dropped(
    ctx: &egui::Context,
    state: &mut TryModel,
    file: std::sync::Arc<dyn egui::DroppedFile>,
) {
    let name = file.path().display().to_string();
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = ctx;
        match file.bytes() {
            Ok(bytes) => state.try_bytes(&name, &bytes),
            Err(e) => state.show(name.clone(), Err(format!("could not read {name}: {e}"))),
        }
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = state;
        let ctx = ctx.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let read = file
                .bytes_async()
                .await
                .map(|bytes| (name.clone(), bytes))
                .map_err(|e| format!("the browser could not read {name}: {e}"));
            super::files::receive_file(super::files::FileChoice::ImageToTry, read, &ctx);
        });
    }
}
