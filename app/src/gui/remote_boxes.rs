//! The window's remote boxes: those added with *Add remote box…*, remembered by address (their
//! tokens in the keyring or the per-user token files of `kiln_core::remote`, never in the window's settings),
//! each listed on a background thread and offered beside the local devices.

use std::sync::mpsc::{self, Receiver};

use kiln_core::device::DeviceInfo;
use kiln_core::remote::{self, BoxAddress, Token};

/// What listing a box's devices came to.
type Listing = Result<Vec<DeviceInfo>, String>;

/// The remote boxes and the *Add remote box* window; a panel owning its state.
#[derive(Default)]
pub struct RemoteBoxes {
    boxes: Vec<RemoteBox>,
    dialog: Option<AddBoxDialog>,
}

struct RemoteBox {
    address: BoxAddress,
    state: BoxState,
}

enum BoxState {
    Listing(Receiver<Listing>),
    Ready(Vec<DeviceInfo>),
    Failed(String),
}

/// The *Add remote box* window's fields and the check it is waiting for.
#[derive(Default)]
struct AddBoxDialog {
    address: String,
    token: String,
    checking: Option<(BoxAddress, Receiver<Listing>)>,
    error: Option<String>,
}

impl RemoteBoxes {
    /// The boxes remembered from an earlier launch, each listed in the background with its
    /// remembered token.
    pub fn remembered(addresses: &[String], ctx: &egui::Context) -> Self {
        let boxes = addresses
            .iter()
            .filter_map(|text| text.parse::<BoxAddress>().ok())
            .map(|address| RemoteBox {
                state: BoxState::Listing(list_in_background(address.clone(), None, ctx)),
                address,
            })
            .collect();
        Self {
            boxes,
            dialog: None,
        }
    }

    /// The addresses to remember for the next launch.
    pub fn addresses(&self) -> Vec<String> {
        self.boxes.iter().map(|b| b.address.to_string()).collect()
    }

    /// Every device of the boxes listed so far, box by box.
    pub fn devices(&self) -> Vec<DeviceInfo> {
        self.boxes
            .iter()
            .filter_map(|b| match &b.state {
                BoxState::Ready(devices) => Some(devices.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// A sentence per box that could not be listed, for under the device choice.
    pub fn problems(&self) -> Vec<String> {
        self.boxes
            .iter()
            .filter_map(|b| match &b.state {
                BoxState::Failed(reason) => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }

    /// Opens the *Add remote box* window.
    pub fn open_dialog(&mut self) {
        self.dialog.get_or_insert_with(AddBoxDialog::default);
    }

    /// Takes in what the background listings found; a box added in the window joins the list
    /// once its token was accepted.
    pub fn poll(&mut self) {
        for remote_box in &mut self.boxes {
            if let BoxState::Listing(receiver) = &remote_box.state
                && let Ok(listing) = receiver.try_recv()
            {
                remote_box.state = match listing {
                    Ok(devices) => BoxState::Ready(devices),
                    Err(reason) => BoxState::Failed(reason),
                };
            }
        }
        let Some(dialog) = &mut self.dialog else {
            return;
        };
        let Some((address, receiver)) = &dialog.checking else {
            return;
        };
        match receiver.try_recv() {
            Ok(Ok(devices)) => {
                let address = address.clone();
                self.boxes.retain(|b| b.address != address);
                self.boxes.push(RemoteBox {
                    address,
                    state: BoxState::Ready(devices),
                });
                self.dialog = None;
            }
            Ok(Err(reason)) => {
                dialog.error = Some(reason);
                dialog.checking = None;
            }
            Err(_) => {}
        }
    }

    /// The *Add remote box* window, when open.
    pub fn dialog_ui(&mut self, ctx: &egui::Context) {
        let Some(dialog) = &mut self.dialog else {
            return;
        };
        let mut open = true;
        egui::Window::new("Add remote box")
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .show(ctx, |ui| add_box_ui(ui, dialog, ctx));
        if !open {
            self.dialog = None;
        }
    }
}

/// The fields of the *Add remote box* window and its Add button.
fn add_box_ui(ui: &mut egui::Ui, dialog: &mut AddBoxDialog, ctx: &egui::Context) {
    ui.label("A machine that runs `kiln serve` prints its address and token.");
    egui::Grid::new("add-box").num_columns(2).show(ui, |ui| {
        let label = ui.label("Address");
        ui.add(
            egui::TextEdit::singleline(&mut dialog.address)
                .hint_text(format!("127.0.0.1:{}", remote::DEFAULT_PORT)),
        )
        .labelled_by(label.id);
        ui.end_row();
        let label = ui.label("Token");
        ui.add(egui::TextEdit::singleline(&mut dialog.token).password(true))
            .labelled_by(label.id);
        ui.end_row();
    });
    if let Some(error) = &dialog.error {
        ui.colored_label(ui.visuals().error_fg_color, error);
    }
    ui.horizontal(|ui| {
        let checking = dialog.checking.is_some();
        if ui
            .add_enabled(!checking, egui::Button::new("Add"))
            .clicked()
        {
            dialog.error = None;
            match (
                dialog.address.parse::<BoxAddress>(),
                Token::new(&dialog.token),
            ) {
                (Ok(address), Ok(token)) => {
                    let receiver = list_in_background(address.clone(), Some(token), ctx);
                    dialog.checking = Some((address, receiver));
                }
                (Err(e), _) | (_, Err(e)) => dialog.error = Some(e.to_string()),
            }
        }
        if checking {
            ui.spinner();
            ui.label("connecting…");
        }
    });
    ui.label(
        "The token is kept in this system's keyring, or in a file only you can read; never in \
         the window's settings.",
    );
}

/// Lists the box's devices on a named thread: with `token` (then remembered once the box took
/// it), or with the token remembered for it.
fn list_in_background(
    address: BoxAddress,
    token: Option<Token>,
    ctx: &egui::Context,
) -> Receiver<Listing> {
    let (sender, receiver) = mpsc::channel();
    let ctx = ctx.clone();
    let spawned = std::thread::Builder::new()
        .name("kiln-remote-box".to_owned())
        .spawn(move || {
            let listing = list(&address, token);
            // The window may have closed meanwhile; nobody is left to tell.
            let _ = sender.send(listing);
            ctx.request_repaint();
        });
    if let Err(e) = spawned {
        let (sender, failed) = mpsc::channel();
        let _ = sender.send(Err(format!("cannot list the box: {e}")));
        return failed;
    }
    receiver
}

/// A browser page has no sockets of its own to reach a box with.
#[cfg(target_arch = "wasm32")]
fn list(address: &BoxAddress, _token: Option<Token>) -> Listing {
    Err(remote::RemoteError::FromBrowser {
        address: address.clone(),
    }
    .to_string())
}

#[cfg(not(target_arch = "wasm32"))]
fn list(address: &BoxAddress, token: Option<Token>) -> Listing {
    let given = token.is_some();
    let token = match token {
        Some(token) => token,
        None => remote::token_for(address).map_err(|e| e.to_string())?,
    };
    let devices = remote::box_devices(address, &token).map_err(|e| e.to_string())?;
    if given {
        remote::remember_token(address, &token).map_err(|e| e.to_string())?;
    }
    Ok(devices)
}
