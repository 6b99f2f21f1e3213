use super::*;

#[test]
fn a_device_class_fills_the_width_of_its_column() {
    assert_eq!(
        format!("{:<19}|", DeviceClass::Remote),
        "remote device      |"
    );
}

#[test]
fn a_device_list_parses_in_order_and_data_parallel_takes_one_kind_of_device() {
    let list = parse_devices("gpu:0, gpu:1").unwrap();
    assert_eq!(list, vec![DeviceChoice::Gpu(0), DeviceChoice::Gpu(1)]);
    assert_eq!(devices_text(&list), "gpu:0,gpu:1");
    assert!(data_parallel_problem(&list).is_none());
    let boxed = parse_devices("remote:box:7340/0,remote:box:7340/1").unwrap();
    assert!(data_parallel_problem(&boxed).is_none());
    let cudas = parse_devices("cuda:0,cuda:1").unwrap();
    assert!(data_parallel_problem(&cudas).is_none());
    assert!(parse_devices("gpu:0,").is_err(), "an empty entry is a typo");
    for (list, said) in [
        ("remote:box:7340/0,remote:other:7340/0", "one box"),
        ("gpu:0,remote:box:7340/1", "one box"),
        ("gpu:0,cuda:1", "all gpu:N, all cuda:N"),
        ("cuda:0,remote:box:7340/1", "all gpu:N, all cuda:N"),
        ("gpu:1,gpu:1", "gpu:1 is listed twice"),
        ("auto,gpu:1", "name each device"),
        ("gpu:0,cpu", "the CPU is one device"),
    ] {
        let problem = data_parallel_problem(&parse_devices(list).unwrap());
        assert!(
            problem.as_deref().is_some_and(|p| p.contains(said)),
            "{list}: {problem:?}"
        );
    }
    // One device is not data parallel, whatever it is.
    assert!(data_parallel_problem(&[DeviceChoice::Auto]).is_none());
}

#[cfg(not(feature = "cuda"))]
#[test]
fn a_cuda_device_in_a_build_without_cuda_says_how_to_build_with_it() {
    let error = resolve(&DeviceChoice::Cuda(0)).unwrap_err();
    assert_eq!(error, DeviceError::CudaNotBuilt { index: 0 });
    let message = error.to_string();
    assert!(message.contains("--features cuda"), "{message}");
    assert!(message.contains("gpu:N"), "{message}");
    assert!(cuda::listed().is_empty());
}

#[test]
fn cuda_devices_are_not_counted_among_the_wgpu_adapters() {
    let mut listed = listing(&[DeviceClass::DiscreteGpu]);
    let mut cuda = listed[0].clone();
    (cuda.id, cuda.backend) = ("cuda:0".to_owned(), CUDA_BACKEND.to_owned());
    listed.insert(1, cuda);
    assert_eq!(gpus(&listed).count(), 1);
    let gone = select(&DeviceChoice::Gpu(1), &listed).unwrap_err();
    assert!(
        matches!(gone, DeviceError::NoSuchGpu { index: 1, .. }),
        "{gone}"
    );
    if cfg!(feature = "cuda") {
        let (info, target) = select(&DeviceChoice::Cuda(0), &listed).unwrap();
        assert_eq!((info.id.as_str(), target), ("cuda:0", Target::Cuda(0)));
        let missing = select(&DeviceChoice::Cuda(1), &listed)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("there is no cuda:1") && missing.contains("cuda:0 is"));
    }
}

#[test]
fn the_cpu_is_named_by_its_cores_not_by_the_threads_a_run_steps_on() {
    let name = DeviceInfo::cpu().name;
    assert!(name.starts_with("CPU (") && name.contains("core"), "{name}");
    assert!(!name.contains("thread"), "{name}");
}
use burn::tensor::Tensor;

/// A listing as `list_devices` would build it from adapters of these classes.
fn listing(classes: &[DeviceClass]) -> Vec<DeviceInfo> {
    let mut devices: Vec<DeviceInfo> = classes
        .iter()
        .enumerate()
        .map(|(index, class)| DeviceInfo {
            id: format!("gpu:{index}"),
            name: format!("adapter {index}"),
            backend: "Vulkan".to_owned(),
            class: *class,
            driver: "driver".to_owned(),
            driver_info: "1.0".to_owned(),
            shader_f16: false,
        })
        .collect();
    devices.push(DeviceInfo::cpu());
    devices
}

use DeviceClass::{DiscreteGpu, IntegratedGpu, Software, VirtualGpu};

#[test]
fn remote_choices_parse_with_the_device_index_defaulting_to_zero() {
    let choice: DeviceChoice = "remote:box.lan:7340".parse().unwrap();
    let address = BoxAddress {
        host: "box.lan".into(),
        port: 7340,
    };
    assert_eq!(choice, DeviceChoice::Remote { address, index: 0 });
    assert_eq!(choice.to_string(), "remote:box.lan:7340/0");
    let ipv6: DeviceChoice = "remote:[::1]:7340/2".parse().unwrap();
    assert_eq!(ipv6.to_string(), "remote:[::1]:7340/2");
    for bad in [
        "remote:box",
        "remote:box:7340/x",
        "remote:box:7340/",
        "remote:",
    ] {
        let error = bad.parse::<DeviceChoice>().unwrap_err().to_string();
        assert!(error.contains("HOST:PORT"), "{bad}: {error}");
    }
}

#[test]
fn choices_parse_and_display() {
    for (text, choice) in [
        ("auto", DeviceChoice::Auto),
        ("cpu", DeviceChoice::Cpu),
        ("gpu:0", DeviceChoice::Gpu(0)),
        ("gpu:12", DeviceChoice::Gpu(12)),
        ("cuda:0", DeviceChoice::Cuda(0)),
        ("cuda:3", DeviceChoice::Cuda(3)),
    ] {
        assert_eq!(text.parse::<DeviceChoice>(), Ok(choice.clone()));
        assert_eq!(choice.to_string(), text);
    }
    assert_eq!(" GPU:1 ".parse::<DeviceChoice>(), Ok(DeviceChoice::Gpu(1)));
    assert_eq!("Auto".parse::<DeviceChoice>(), Ok(DeviceChoice::Auto));
    assert_eq!(DeviceChoice::default(), DeviceChoice::Auto);
}

#[test]
fn unknown_choices_say_what_is_accepted() {
    for text in [
        "", "gpu", "gpu:", "gpu:x", "gpu:+1", "gpu:-1", "cuda", "cuda:", "cuda:+0", "gpu0",
        "gpu:1:2",
    ] {
        let error = text.parse::<DeviceChoice>().unwrap_err();
        assert_eq!(
            error,
            DeviceError::UnknownChoice {
                text: text.to_owned()
            }
        );
        let message = error.to_string();
        for accepted in ["`auto`", "`cpu`", "`gpu:N`", "`cuda:N`", "kiln devices"] {
            assert!(message.contains(accepted), "{message}");
        }
    }
    let huge = "gpu:99999999999999999999999".parse::<DeviceChoice>();
    assert!(matches!(huge, Err(DeviceError::UnknownChoice { .. })));
}

#[test]
fn choices_serialize_as_their_text() {
    let json = serde_json::to_string(&DeviceChoice::Gpu(1)).unwrap();
    assert_eq!(json, "\"gpu:1\"");
    let back: DeviceChoice = serde_json::from_str("\"cpu\"").unwrap();
    assert_eq!(back, DeviceChoice::Cpu);
    let bad = serde_json::from_str::<DeviceChoice>("\"tpu\"").unwrap_err();
    assert!(bad.to_string().contains("`gpu:N`"), "{bad}");
}

#[test]
fn auto_never_picks_a_software_rasterizer() {
    assert_eq!(auto_choice(&listing(&[Software])), DeviceChoice::Cpu);
    assert_eq!(auto_choice(&listing(&[])), DeviceChoice::Cpu);
    assert_eq!(auto_choice(&[]), DeviceChoice::Cpu);
    let (info, target) = select(&DeviceChoice::Auto, &listing(&[Software])).unwrap();
    assert_eq!((info.class, target), (DeviceClass::Cpu, Target::Flex));
    let (info, target) = select(&DeviceChoice::Auto, &[]).unwrap();
    assert_eq!((info.id.as_str(), target), ("cpu", Target::Flex));
}

#[test]
fn auto_prefers_discrete_then_integrated_then_virtual() {
    let mixed = listing(&[Software, IntegratedGpu, DiscreteGpu, DiscreteGpu]);
    assert_eq!(auto_choice(&mixed), DeviceChoice::Gpu(2));
    let (info, target) = select(&DeviceChoice::Auto, &mixed).unwrap();
    assert_eq!(info.id, "gpu:2");
    assert_eq!(target, Target::Wgpu(DeviceKind::DiscreteGpu(0)));
    assert_eq!(
        auto_choice(&listing(&[VirtualGpu, IntegratedGpu])),
        DeviceChoice::Gpu(1)
    );
    assert_eq!(
        auto_choice(&listing(&[Software, VirtualGpu])),
        DeviceChoice::Gpu(1)
    );
}

#[test]
fn gpu_index_counts_within_its_type_as_cubecl_does() {
    let devices = listing(&[
        IntegratedGpu,
        DiscreteGpu,
        Software,
        IntegratedGpu,
        VirtualGpu,
    ]);
    let kinds: Vec<Target> = (0..5)
        .map(|n| select(&DeviceChoice::Gpu(n), &devices).unwrap().1)
        .collect();
    assert_eq!(
        kinds,
        [
            Target::Wgpu(DeviceKind::IntegratedGpu(0)),
            Target::Wgpu(DeviceKind::DiscreteGpu(0)),
            Target::Wgpu(DeviceKind::Cpu),
            Target::Wgpu(DeviceKind::IntegratedGpu(1)),
            Target::Wgpu(DeviceKind::VirtualGpu(0)),
        ]
    );
    let (info, target) = select(&DeviceChoice::Cpu, &devices).unwrap();
    assert_eq!((info.id.as_str(), target), ("cpu", Target::Flex));
}

#[test]
fn a_second_software_adapter_is_refused() {
    let devices = listing(&[Software, Software]);
    let error = select(&DeviceChoice::Gpu(1), &devices).unwrap_err();
    assert!(matches!(
        error,
        DeviceError::UnreachableAdapter { index: 1, .. }
    ));
    assert!(error.to_string().contains("gpu:0"), "{error}");
}

#[test]
fn a_missing_gpu_lists_what_exists() {
    let devices = listing(&[DiscreteGpu, Software]);
    let error = select(&DeviceChoice::Gpu(5), &devices).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("there is no gpu:5: "), "{message}");
    for part in [
        "2 GPU adapters (gpu:0 is adapter 0 [",
        "; gpu:1 is",
        "kiln devices",
    ] {
        assert!(message.contains(part), "{message}");
    }
    let none = select(&DeviceChoice::Gpu(0), &listing(&[])).unwrap_err();
    assert!(none.to_string().contains("no GPU adapter"), "{none}");
    assert!(none.to_string().contains("`cpu`"), "{none}");
}

#[test]
fn the_listing_ends_with_the_cpu_and_numbers_gpus_in_order() {
    let devices = list_devices();
    let cpus: Vec<&DeviceInfo> = devices
        .iter()
        .filter(|device| device.class == DeviceClass::Cpu)
        .collect();
    assert_eq!(cpus.len(), 1);
    assert_eq!(devices.last(), Some(cpus[0]));
    assert_eq!(cpus[0].id, "cpu");
    assert_eq!(cpus[0].backend, CPU_BACKEND);
    for (index, gpu) in gpus(&devices).enumerate() {
        assert_eq!(gpu.id, format!("gpu:{index}"));
        assert_eq!(gpu.id.parse::<DeviceChoice>(), Ok(DeviceChoice::Gpu(index)));
    }
    assert_eq!(
        list_devices(),
        devices,
        "the listing is stable within a process"
    );
}

#[test]
fn auto_on_this_machine_is_never_software() {
    let (info, _device) = resolve(&DeviceChoice::Auto).unwrap();
    assert_ne!(info.class, DeviceClass::Software);
}

#[test]
fn the_cpu_device_computes() {
    let (info, device) = resolve(&DeviceChoice::Cpu).unwrap();
    assert_eq!(info.class, DeviceClass::Cpu);
    let sum: f32 = Tensor::<1>::from_floats([1.0, 2.0], &device)
        .sum()
        .into_scalar();
    assert_eq!(sum, 3.0);
}

#[test]
fn device_info_serializes_with_its_fields() {
    let json = serde_json::to_value(DeviceInfo::cpu()).unwrap();
    assert_eq!(json["id"], "cpu");
    assert_eq!(json["class"], "cpu");
    assert_eq!(json["backend"], CPU_BACKEND);
    let gpu = &listing(&[IntegratedGpu])[0];
    assert_eq!(
        serde_json::to_value(gpu).unwrap()["class"],
        "integrated_gpu"
    );
    assert_eq!(
        gpu.to_string(),
        "adapter 0 [integrated GPU, Vulkan, driver 1.0]"
    );
    let cpu = DeviceInfo::cpu().to_string();
    assert!(
        cpu.starts_with("CPU (") && cpu.ends_with(" [flex (CPU)]"),
        "{cpu}"
    );
}
