//! The range test drawn as fastai and Lightning draw it: the loss against the rate on a log
//! axis, each step's loss faint and the smoothed loss bold, the suggested rate marked.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::LrFindReport;
use crate::export::{ExportError, encode_png, register_font};

impl LrFindReport {
    /// The range of losses worth drawing: from a little below the lowest (the steps' or the
    /// smoothed, up to the smoothed lowest) to a little above the first steps' smoothed loss,
    /// so the diverging end does not flatten the rest; `None` without a finite loss.
    pub fn loss_range(&self) -> Option<(f64, f64)> {
        let points: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter(|p| p.loss.is_finite() && p.smoothed_loss.is_finite())
            .map(|p| (p.loss, p.smoothed_loss))
            .collect();
        let lowest_at = (0..points.len()).min_by(|&a, &b| points[a].1.total_cmp(&points[b].1))?;
        let lowest = points[..=lowest_at]
            .iter()
            .map(|p| p.0.min(p.1))
            .fold(f64::INFINITY, f64::min);
        let start = points.iter().take(10).map(|p| p.1).fold(0.0, f64::max);
        let margin = 0.1 * (start - lowest).abs().max(0.05);
        Some(((lowest - margin).max(0.0), start.max(lowest) + margin))
    }

    /// The chart as SVG text.
    pub fn chart_svg(&self, width_px: u32, height_px: u32) -> Result<String, ExportError> {
        register_font()?;
        let mut text = String::new();
        {
            let root =
                SVGBackend::with_string(&mut text, (width_px, height_px)).into_drawing_area();
            self.draw_chart(&root)?;
        }
        Ok(text)
    }

    /// The chart as PNG bytes, the same drawing as [`LrFindReport::chart_svg`].
    pub fn chart_png(&self, width_px: u32, height_px: u32) -> Result<Vec<u8>, ExportError> {
        register_font()?;
        let mut pixels = vec![255u8; width_px as usize * height_px as usize * 3];
        {
            let root =
                BitMapBackend::with_buffer(&mut pixels, (width_px, height_px)).into_drawing_area();
            self.draw_chart(&root)?;
        }
        encode_png(&pixels, width_px, height_px)
    }

    fn draw_chart<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), ExportError> {
        let fail = |e: &dyn std::fmt::Display| ExportError::Draw(e.to_string());
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let points: Vec<(f64, f64, f64)> = self
            .points
            .iter()
            .filter(|p| p.loss.is_finite() && p.smoothed_loss.is_finite())
            .map(|p| (p.lr.log10(), p.loss, p.smoothed_loss))
            .collect();
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            return root.present().map_err(|e| fail(&e));
        };
        let (bottom, top) = self.loss_range().unwrap_or((0.0, 1.0));
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("Learning-rate range test: {}", self.workload),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(first.0..last.0.max(first.0 + 1e-9), bottom..top)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_labels(8)
            .x_label_formatter(&|x| format!("{:.0e}", 10f64.powf(*x)))
            .x_desc("learning rate (log scale)")
            .y_desc("training loss")
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(|e| fail(&e))?;
        let faint = RGBColor(31, 119, 180).mix(0.35);
        let clipped = |y: f64| y.clamp(bottom, top);
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.0, clipped(p.1))),
                faint,
            ))
            .map_err(|e| fail(&e))?;
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.0, clipped(p.2))),
                RGBColor(31, 119, 180).stroke_width(2),
            ))
            .map_err(|e| fail(&e))?;
        if let Some(lr) = self.suggested_lr {
            let x = lr.log10();
            let red = RGBColor(214, 39, 40);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, bottom), (x, top)],
                    red.stroke_width(2),
                )))
                .map_err(|e| fail(&e))?;
            // The label on the side of the line with room for it.
            let label = format!("suggested {lr:.2e}");
            let middle = (first.0 + last.0) / 2.0;
            let at = match x > middle {
                true => x - 0.15 * (last.0 - first.0),
                false => x + 0.01 * (last.0 - first.0),
            };
            let style = ("sans-serif", 13).into_font().color(&red);
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (at, top - 0.04 * (top - bottom)),
                    style,
                )))
                .map_err(|e| fail(&e))?;
        }
        root.present().map_err(|e| fail(&e))
    }
}
