//! The Setup panel's device rows: the list of devices and of the groups that train one model
//! together, and what the chosen device cannot do.

use kiln_core::config::{Precision, Setting};
use kiln_core::device::{CUDA_BACKEND, DeviceClass, DeviceInfo};

use super::SetupAction;
use super::fields::{found, reset_ui, row_label_ui};
use super::form::{SetupForm, new_form};

/// A red line under the precision when the chosen device cannot compute in f16; the engine
/// refuses such a run with the same reason.
pub(super) fn precision_problem_ui(
    ui: &mut egui::Ui,
    form: &SetupForm,
    devices: Option<&[DeviceInfo]>,
) {
    if form.draft.precision != Precision::F16 {
        return;
    }
    let Some(devices) = devices else {
        return;
    };
    let chosen = match form.device.as_str() {
        "auto" => kiln_core::device::auto_choice(devices).to_string(),
        id => id.to_owned(),
    };
    let problem = match devices.iter().find(|d| d.id == chosen) {
        Some(device) if device.class == DeviceClass::Cpu => {
            Some("the CPU trains in f32 only; pick a GPU or f32")
        }
        Some(device) if !device.shader_f16 => {
            Some("this GPU has no 16-bit float shaders; pick f32")
        }
        _ => None,
    };
    if let Some(problem) = problem {
        ui.label("");
        ui.colored_label(ui.visuals().error_fg_color, problem);
        ui.end_row();
    }
}

/// The devices that can train one model together, each group as its `--devices` list and a
/// label: every hardware GPU of this machine (its wgpu adapters, and apart from them its CUDA
/// devices, the same cards by another backend), and every box's devices, when there are two or
/// more.
pub(super) fn parallel_groups(devices: &[DeviceInfo]) -> Vec<(String, String)> {
    let mut groups: Vec<(String, Vec<&DeviceInfo>)> = Vec::new();
    for device in devices {
        let group = match device.class {
            DeviceClass::Remote => device.id.rsplit_once('/').map(|(at, _)| at.to_owned()),
            _ if device.backend == CUDA_BACKEND => Some("cuda".to_owned()),
            class if class.is_hardware_gpu() => Some("gpu".to_owned()),
            _ => None,
        };
        let Some(group) = group else { continue };
        match groups.iter_mut().find(|(name, _)| *name == group) {
            Some((_, members)) => members.push(device),
            None => groups.push((group, vec![device])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .map(|(group, members)| {
            let ids: Vec<&str> = members.iter().map(|d| d.id.as_str()).collect();
            let text = match group.strip_prefix("remote:") {
                Some(address) => format!("all {} devices of {address} at once", members.len()),
                None if group == "cuda" => format!("all {} GPUs at once, on CUDA", members.len()),
                None => format!("all {} GPUs at once", members.len()),
            };
            (ids.join(","), text)
        })
        .collect()
}

/// The device list: auto, each device, each group that trains together, and *Add remote box…*.
pub(super) fn device_row(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    devices: Option<&[DeviceInfo]>,
    actions: &mut Vec<SetupAction>,
) {
    if !found(ui, Setting::Device) {
        return;
    }
    let default = new_form().device.clone();
    let changed = form.device != default;
    let label = row_label_ui(ui, Setting::Device.label(), Setting::Device.help(), changed);
    let Some(devices) = devices else {
        ui.label("listing devices…");
        ui.end_row();
        return;
    };
    let describe = |device: &DeviceInfo| {
        if device.class.is_hardware_gpu() {
            format!("{} ({})", device.name, device.backend)
        } else {
            format!("{} [{}]", device.name, device.class.label())
        }
    };
    let auto = kiln_core::device::auto_choice(devices);
    let auto_name = devices
        .iter()
        .find(|d| d.id == auto.to_string())
        .map_or_else(|| "CPU".to_owned(), |d| d.name.clone());
    let auto_text = format!("auto: {auto_name}");
    let together = parallel_groups(devices);
    let selected = if form.device == "auto" {
        auto_text.clone()
    } else if let Some((_, text)) = together.iter().find(|(ids, _)| *ids == form.device) {
        text.clone()
    } else {
        devices
            .iter()
            .find(|d| d.id == form.device)
            .map_or_else(|| form.device.clone(), describe)
    };
    ui.horizontal(|ui| {
    egui::ComboBox::from_id_salt("device")
        .selected_text(selected)
        .width(220.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut form.device, "auto".to_owned(), auto_text);
            for device in devices {
                ui.selectable_value(&mut form.device, device.id.clone(), describe(device));
            }
            for (ids, text) in together {
                ui.selectable_value(&mut form.device, ids, text).on_hover_text(
                    "Data parallel: each step's batch is split across these devices and their gradients summed.",
                );
            }
            // A browser page cannot reach a box (RemoteError::FromBrowser).
            if cfg!(target_arch = "wasm32") {
                return;
            }
            ui.separator();
            if ui
                .selectable_label(false, "Add remote box…")
                .on_hover_text("Train on a device of a machine that runs `kiln serve`.")
                .clicked()
            {
                actions.push(SetupAction::AddRemoteBox);
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(Setting::Device.help());
        if changed && reset_ui(ui, &default) {
            form.device = default;
        }
    });
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_core::device::DeviceChoice;

    #[test]
    fn two_gpus_or_a_box_of_two_are_offered_together_and_the_form_keeps_the_list() {
        let gpu = |index: usize, class| DeviceInfo {
            id: format!("gpu:{index}"),
            class,
            ..DeviceInfo::cpu()
        };
        // The same two cards through CUDA, in a build with it: a group of their own.
        let cuda = |index: usize| DeviceInfo {
            id: format!("cuda:{index}"),
            backend: CUDA_BACKEND.to_owned(),
            ..gpu(index, DeviceClass::DiscreteGpu)
        };
        let big: kiln_core::remote::BoxAddress = "big:7340".parse().unwrap();
        let small: kiln_core::remote::BoxAddress = "small:7340".parse().unwrap();
        let devices = vec![
            gpu(0, DeviceClass::DiscreteGpu),
            gpu(1, DeviceClass::DiscreteGpu),
            gpu(2, DeviceClass::Software),
            cuda(0),
            cuda(1),
            DeviceInfo::remote(&big, 0),
            DeviceInfo::remote(&big, 1),
            DeviceInfo::remote(&small, 0),
            DeviceInfo::cpu(),
        ];
        let groups = parallel_groups(&devices);
        assert_eq!(
            groups,
            vec![
                ("gpu:0,gpu:1".to_owned(), "all 2 GPUs at once".to_owned()),
                (
                    "cuda:0,cuda:1".to_owned(),
                    "all 2 GPUs at once, on CUDA".to_owned()
                ),
                (
                    "remote:big:7340/0,remote:big:7340/1".to_owned(),
                    "all 2 devices of big:7340 at once".to_owned()
                ),
            ]
        );
        let form = SetupForm {
            device: groups[0].0.clone(),
            ..SetupForm::default()
        };
        let experiment = form.check().experiment.expect("valid");
        assert_eq!(experiment.data_parallel, vec![DeviceChoice::Gpu(1)]);
        assert_eq!(
            SetupForm::from_draft(experiment.draft()).device,
            "gpu:0,gpu:1"
        );
    }
}
