//! The panels of a view, arranged as a person drags them (egui_tiles, as rerun lays out its
//! viewer): each panel is a tab that can be dragged beside, above or into another, maximized
//! with a double click on its tab or its ⛶ button, and the default arrangement comes back with
//! one click. Arrangements are remembered between launches with the rest of the window's state.

use egui_tiles::{
    Behavior, Container, Grid, GridLayout, Linear, LinearDir, SimplificationOptions, Tile, TileId,
    Tiles, Tree, UiResponse,
};
use kiln_core::plot::Chart;
use serde::{Deserialize, Serialize};

/// A panel of a tiled view: what it draws is the caller's, where it sits is the arrangement's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pane {
    /// Loss of the plotted runs, training and evaluation.
    Loss,
    /// Accuracy of the plotted runs, training and evaluation.
    Accuracy,
    /// Samples per second of each readback window.
    Throughput,
    /// Milliseconds per step of each readback window.
    StepTime,
    /// The shown run's confusion matrix on the test split.
    ConfusionMatrix,
    /// Precision, recall, F1 and support per class, on test and validation.
    ClassReport,
    /// The test images the shown run got wrong with the most confidence.
    Mistakes,
    /// The test images of the confusion matrix's clicked cell.
    CellImages,
    /// Where a profiled run's step time goes, phase by phase.
    StepProfile,
    /// The settings and results of the ticked runs side by side.
    CompareTable,
}

impl Pane {
    /// The title on the panel's tab in a view of a multi-label run (`per_label`) or not.
    pub fn title_for(self, per_label: bool) -> &'static str {
        match (self, per_label) {
            (Self::ConfusionMatrix, true) => "Labels",
            (Self::ClassReport, true) => "Per-label report",
            (Self::CellImages, true) => "Label's mistakes",
            _ => self.title(),
        }
    }

    /// The title on the panel's tab.
    pub fn title(self) -> &'static str {
        match self.chart() {
            Some(chart) => chart.title(),
            None => match self {
                Self::ConfusionMatrix => "Confusion matrix",
                Self::ClassReport => "Per-class report",
                Self::Mistakes => "Surest mistakes",
                Self::CellImages => "Cell images",
                Self::StepProfile => "Step profile",
                _ => "Compare runs",
            },
        }
    }

    /// The chart this panel draws, for the four plot panels.
    pub fn chart(self) -> Option<Chart> {
        match self {
            Self::Loss => Some(Chart::Loss),
            Self::Accuracy => Some(Chart::Accuracy),
            Self::Throughput => Some(Chart::Throughput),
            Self::StepTime => Some(Chart::StepTime),
            _ => None,
        }
    }
}

/// The tiled views, each with an arrangement of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Tiled {
    /// The live plots beside the setup.
    Train,
    /// A run's confusion matrix, class report, mistakes and step profile.
    Results,
    /// The compare table over the ticked runs' overlaid plots.
    Compare,
}

/// The four charts, two by two.
const CHARTS: [Pane; 4] = [Pane::Loss, Pane::Accuracy, Pane::Throughput, Pane::StepTime];

impl Tiled {
    /// The panels as they are before anyone moves them.
    fn default_tree(self) -> Tree<Pane> {
        let mut tiles = Tiles::default();
        let root = match self {
            Self::Train => charts_grid(&mut tiles),
            Self::Results => {
                let matrix = tiles.insert_pane(Pane::ConfusionMatrix);
                let report = tiles.insert_pane(Pane::ClassReport);
                let mistakes = tiles.insert_pane(Pane::Mistakes);
                let cell = tiles.insert_pane(Pane::CellImages);
                let profile = tiles.insert_pane(Pane::StepProfile);
                let below = tiles.insert_tab_tile(vec![mistakes, cell, profile]);
                let right = tiles.insert_vertical_tile(vec![report, below]);
                // The matrix square and as large as the view allows: 100 classes fit it at
                // 1280×800.
                let mut row = Linear::new(LinearDir::Horizontal, vec![matrix, right]);
                row.shares.set_share(matrix, 1.2);
                row.shares.set_share(right, 0.8);
                tiles.insert_container(row)
            }
            Self::Compare => {
                let table = tiles.insert_pane(Pane::CompareTable);
                let charts = charts_grid(&mut tiles);
                let mut column = Linear::new(LinearDir::Vertical, vec![table, charts]);
                column.shares.set_share(table, 0.7);
                column.shares.set_share(charts, 1.3);
                tiles.insert_container(column)
            }
        };
        Tree::new(self.tree_id(), root, tiles)
    }

    fn tree_id(self) -> egui::Id {
        egui::Id::unique(("kiln-panels", self))
    }
}

fn charts_grid(tiles: &mut Tiles<Pane>) -> TileId {
    let charts = CHARTS.map(|pane| tiles.insert_pane(pane)).to_vec();
    let mut grid = Grid::new(charts);
    grid.layout = GridLayout::Columns(2);
    tiles.insert_container(Container::Grid(grid))
}

/// One view's panels: where each sits, and the one maximized for now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Arrangement {
    view: Tiled,
    tree: Tree<Pane>,
    /// Whether a panel was dragged, resized or had another tab opened since the default.
    #[serde(default)]
    moved: bool,
    /// Not remembered: a window opens with every panel in its place.
    #[serde(skip)]
    maximized: Option<Pane>,
    /// Whether the Results panels show a run of several labels per image, whose matrix and
    /// class report are per label: their tabs say so.
    #[serde(skip)]
    per_label: bool,
}

impl Arrangement {
    /// The default arrangement of `view`.
    pub fn new(view: Tiled) -> Self {
        Self {
            view,
            tree: view.default_tree(),
            moved: false,
            maximized: None,
            per_label: false,
        }
    }

    /// Titles the panels for a run of several labels per image (`true`) or of one class each.
    pub fn set_per_label(&mut self, per_label: bool) {
        self.per_label = per_label;
    }

    /// Puts every panel back where it was at first.
    pub fn reset(&mut self) {
        *self = Self::new(self.view);
    }

    /// Whether the panels are where they were at first (then *Default layout* has nothing to
    /// do).
    pub fn is_default(&self) -> bool {
        self.maximized.is_none() && !self.moved
    }

    /// The panel drawn alone, if one is maximized.
    pub fn maximized(&self) -> Option<Pane> {
        self.maximized
    }

    /// Draws `pane` alone until [`Self::restore`]; a panel the arrangement lacks is ignored.
    pub fn maximize(&mut self, pane: Pane) {
        if self.tree.tiles.find_pane(&pane).is_some() {
            self.maximized = Some(pane);
        }
    }

    /// Brings `pane` to the front of its tabs (and out of hiding behind a maximized other), as a
    /// click on its tab would; a panel the arrangement lacks is ignored.
    pub fn show(&mut self, pane: Pane) {
        if self.maximized.is_some_and(|shown| shown != pane) {
            self.maximized = None;
        }
        self.tree
            .make_active(|_, tile| matches!(tile, Tile::Pane(p) if *p == pane));
    }

    /// Draws every panel again.
    pub fn restore(&mut self) {
        self.maximized = None;
    }

    /// Whether every panel of the default is in the tree, once each: a remembered arrangement
    /// from an older Kiln (a panel added since, or one renamed) is replaced by the default.
    fn is_complete(&self) -> bool {
        let default = self.view.default_tree();
        let panes = |tree: &Tree<Pane>| {
            let mut panes: Vec<String> = tree
                .tiles
                .tiles()
                .filter_map(|tile| match tile {
                    Tile::Pane(pane) => Some(format!("{pane:?}")),
                    Tile::Container(_) => None,
                })
                .collect();
            panes.sort();
            panes
        };
        self.tree.root().is_some() && panes(&self.tree) == panes(&default)
    }
}

/// The arrangements of the three tiled views, as remembered.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Arrangements {
    /// The Train view's plots.
    pub train: Arrangement,
    /// The Results view's panels.
    pub results: Arrangement,
    /// The Compare view's table and plots.
    pub compare: Arrangement,
}

impl Default for Arrangements {
    fn default() -> Self {
        Self {
            train: Arrangement::new(Tiled::Train),
            results: Arrangement::new(Tiled::Results),
            compare: Arrangement::new(Tiled::Compare),
        }
    }
}

impl Arrangements {
    /// Replaces any remembered arrangement that does not hold its view's panels (from an older
    /// Kiln, or a file edited by hand) with the default.
    pub fn repaired(mut self) -> Self {
        for (arrangement, view) in [
            (&mut self.train, Tiled::Train),
            (&mut self.results, Tiled::Results),
            (&mut self.compare, Tiled::Compare),
        ] {
            if arrangement.view != view || !arrangement.is_complete() {
                *arrangement = Arrangement::new(view);
            }
        }
        self
    }
}

/// The smallest width or height a panel is dragged down to: a chart keeps its axes and a few
/// grid lines readable.
const MIN_PANEL_PX: f32 = 160.0;

/// Draws the arrangement's panels in the space left in `ui`, each through `draw`, or the
/// maximized one alone under a bar that restores the rest (as Escape does).
pub fn arrangement_ui(
    ui: &mut egui::Ui,
    arrangement: &mut Arrangement,
    draw: &mut dyn FnMut(&mut egui::Ui, Pane),
) {
    if let Some(pane) = arrangement.maximized {
        let restore = ui
            .horizontal(|ui| {
                ui.strong(pane.title_for(arrangement.per_label));
                ui.button("⛶ Show every panel")
                    .on_hover_text("Back to the arrangement (Esc)")
                    .clicked()
            })
            .inner;
        if restore || ui.input(|i| i.key_pressed(egui::Key::Escape)) {
            arrangement.restore();
        }
        draw(ui, pane);
        return;
    }
    let mut behavior = PanelBehavior {
        draw,
        maximize: None,
        moved: false,
        per_label: arrangement.per_label,
    };
    arrangement.tree.ui(&mut behavior, ui);
    arrangement.moved |= behavior.moved;
    if let Some(pane) = behavior.maximize {
        arrangement.maximize(pane);
    }
}

struct PanelBehavior<'a> {
    draw: &'a mut dyn FnMut(&mut egui::Ui, Pane),
    /// The panel a double click or a ⛶ asked to maximize this frame.
    maximize: Option<Pane>,
    /// Whether a panel was moved, resized or another tab opened this frame.
    moved: bool,
    /// Whether the panels show a multi-label run.
    per_label: bool,
}

impl Behavior<Pane> for PanelBehavior<'_> {
    fn pane_ui(&mut self, ui: &mut egui::Ui, _tile_id: TileId, pane: &mut Pane) -> UiResponse {
        // Panels draw inside a margin of their own; the tab bar above is the drag handle.
        egui::Frame::new()
            .inner_margin(egui::Margin::same(4))
            .show(ui, |ui| {
                ui.set_min_size(ui.available_size());
                (self.draw)(ui, *pane);
            });
        UiResponse::None
    }

    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        pane.title_for(self.per_label).into()
    }

    fn on_tab_button(
        &mut self,
        tiles: &mut Tiles<Pane>,
        tile_id: TileId,
        button_response: egui::Response,
    ) -> egui::Response {
        if button_response.double_clicked()
            && let Some(Tile::Pane(pane)) = tiles.get(tile_id)
        {
            self.maximize = Some(*pane);
        }
        button_response.on_hover_text(
            "Drag to put this panel beside, above or in with another; double-click to maximize",
        )
    }

    fn top_bar_right_ui(
        &mut self,
        tiles: &Tiles<Pane>,
        ui: &mut egui::Ui,
        _tile_id: TileId,
        tabs: &egui_tiles::Tabs,
        _scroll_offset: &mut f32,
    ) {
        let Some(Tile::Pane(pane)) = tabs.active.and_then(|active| tiles.get(active)) else {
            return;
        };
        if ui
            .small_button("⛶")
            .on_hover_text(format!("Maximize {}", pane.title_for(self.per_label)))
            .clicked()
        {
            self.maximize = Some(*pane);
        }
    }

    fn on_edit(&mut self, edit_action: egui_tiles::EditAction) {
        use egui_tiles::EditAction;
        if matches!(
            edit_action,
            EditAction::TileResized | EditAction::TileDropped | EditAction::TabSelected
        ) {
            self.moved = true;
        }
    }

    fn min_size(&self) -> f32 {
        MIN_PANEL_PX
    }

    fn simplification_options(&self) -> SimplificationOptions {
        // Every panel keeps a tab: its title, and the handle it is dragged by.
        SimplificationOptions {
            all_panes_must_have_tabs: true,
            ..SimplificationOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_starts_with_each_of_its_panels_once_and_reset_brings_the_default_back() {
        for view in [Tiled::Train, Tiled::Results, Tiled::Compare] {
            let mut arrangement = Arrangement::new(view);
            assert!(
                arrangement.is_complete() && arrangement.is_default(),
                "{view:?}"
            );
            let root = arrangement.tree.root().unwrap();
            let first = arrangement.tree.tiles.tile_ids().find(|&id| id != root);
            arrangement.tree.remove_recursively(first.unwrap());
            arrangement.moved = true;
            assert!(!arrangement.is_complete() && !arrangement.is_default());
            arrangement.reset();
            assert!(arrangement.is_complete() && arrangement.is_default());
        }
    }

    #[test]
    fn a_maximized_panel_must_be_in_the_view_and_is_not_remembered() {
        let mut arrangement = Arrangement::new(Tiled::Train);
        arrangement.maximize(Pane::ConfusionMatrix);
        assert_eq!(
            arrangement.maximized(),
            None,
            "Train has no confusion matrix"
        );
        arrangement.maximize(Pane::StepTime);
        assert_eq!(arrangement.maximized(), Some(Pane::StepTime));
        assert!(!arrangement.is_default());
        let json = serde_json::to_string(&arrangement).unwrap();
        let back: Arrangement = serde_json::from_str(&json).unwrap();
        assert_eq!(back.maximized(), None);
        assert!(back.is_default(), "the panels come back where they were");
        arrangement.restore();
        assert!(arrangement.is_default());
    }

    #[test]
    fn a_remembered_arrangement_that_lacks_a_panel_or_sits_in_the_wrong_view_is_replaced() {
        let mut remembered = Arrangements {
            results: Arrangement::new(Tiled::Compare),
            ..Arrangements::default()
        };
        let root = remembered.train.tree.root().unwrap();
        let chart = remembered.train.tree.tiles.find_pane(&Pane::Loss).unwrap();
        remembered.train.tree.remove_recursively(chart);
        assert_eq!(remembered.train.tree.root(), Some(root));
        let repaired = remembered.repaired();
        assert!(repaired.train.tree.tiles.find_pane(&Pane::Loss).is_some());
        assert!(repaired.results.is_default() && repaired.results.view == Tiled::Results);
        let json = serde_json::to_string(&Arrangements::default()).unwrap();
        let back: Arrangements = serde_json::from_str(&json).unwrap();
        assert!(back.repaired().compare.is_default());
    }

    #[test]
    fn a_clicked_cell_brings_its_images_panel_to_the_front_of_its_tabs() {
        let mut arrangement = Arrangement::new(Tiled::Results);
        let front = |arrangement: &Arrangement, pane: Pane| {
            let tile = arrangement.tree.tiles.find_pane(&pane).unwrap();
            arrangement.tree.active_tiles().contains(&tile)
        };
        assert!(front(&arrangement, Pane::Mistakes));
        assert!(!front(&arrangement, Pane::CellImages));
        arrangement.maximize(Pane::ConfusionMatrix);
        arrangement.show(Pane::CellImages);
        assert!(front(&arrangement, Pane::CellImages));
        assert!(!front(&arrangement, Pane::Mistakes));
        assert_eq!(
            arrangement.maximized(),
            None,
            "the maximized matrix hid the images"
        );
    }
}
