//! Rows printed as an aligned table for a person or as CSV for a program.
//!
//! A [`Table`] holds typed [`Cell`]s rather than strings, so the same rows
//! print for a person (`$0.0123`, `-`, right-aligned numbers, a `total`
//! line) and for a spreadsheet (`0.012300`, empty, snake_case headers, no
//! total). A column may exist in one form only: CSV keeps an `estimated`
//! flag and a timestamp that the table folds into a `~` or leaves out.

use std::fmt::Write as _;

use cox_store::Totals;

use crate::report::usd;

/// One value of a row, printed one way for a person and another for CSV.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell {
    /// Left-aligned text.
    Text(String),
    /// Text that may be missing: `-` in a table, empty in CSV.
    Maybe(Option<String>),
    /// A count, right-aligned.
    Count(u64),
    /// Dollars: `$0.0123` (`~` when estimated) in a table, six decimals in
    /// CSV.
    Usd { amount: f64, estimated: bool },
    /// A share: `41.7%` in a table, `0.4167` in CSV.
    Share(f64),
    /// `true`/`false` in CSV; in a table, `~` for true and nothing else.
    Flag(bool),
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Text(text) | Cell::Maybe(Some(text)) => text.clone(),
            Cell::Maybe(None) => "-".to_owned(),
            Cell::Count(n) => n.to_string(),
            Cell::Usd { amount, estimated } => usd(*amount, *estimated),
            Cell::Share(share) => format!("{:.1}%", share * 100.0),
            Cell::Flag(flag) => if *flag { "~" } else { "" }.to_owned(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Text(text) | Cell::Maybe(Some(text)) => csv_field(text),
            Cell::Maybe(None) => String::new(),
            Cell::Count(n) => n.to_string(),
            Cell::Usd { amount, .. } => format!("{amount:.6}"),
            Cell::Share(share) => format!("{share:.4}"),
            Cell::Flag(flag) => flag.to_string(),
        }
    }

    fn right_aligned(&self) -> bool {
        matches!(self, Cell::Count(_) | Cell::Usd { .. } | Cell::Share(_))
    }
}

/// RFC 4180: quoted when it holds a comma, a quote or a line break, with
/// quotes doubled.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// A column: its heading in a table (`None`: CSV only) and in CSV
/// (`None`: table only).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Column {
    pub title: Option<&'static str>,
    pub key: Option<&'static str>,
}

/// A column in both forms.
pub(crate) const fn col(title: &'static str, key: &'static str) -> Column {
    Column {
        title: Some(title),
        key: Some(key),
    }
}

/// A column only CSV has.
pub(crate) const fn csv_only(key: &'static str) -> Column {
    Column {
        title: None,
        key: Some(key),
    }
}

/// A column only the table has.
pub(crate) const fn table_only(title: &'static str) -> Column {
    Column {
        title: Some(title),
        key: None,
    }
}

/// Rows under named columns.
#[derive(Debug)]
pub(crate) struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
    /// A last row for the table only (a `total`); CSV readers sum for
    /// themselves.
    footer: Option<Vec<Cell>>,
}

impl Table {
    pub fn new(columns: &[Column]) -> Table {
        Table {
            columns: columns.to_vec(),
            rows: Vec::new(),
            footer: None,
        }
    }

    /// Adds a row; it has one cell per column.
    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "{row:?}");
        self.rows.push(row);
    }

    pub fn footer(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "{row:?}");
        self.footer = Some(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Aligned columns two spaces apart, numbers to the right, headings in
    /// capitals, no trailing spaces.
    pub fn text(&self) -> String {
        let shown: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].title.is_some())
            .collect();
        let rows: Vec<&Vec<Cell>> = self.rows.iter().chain(self.footer.as_ref()).collect();
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|row| shown.iter().map(|&i| row[i].text()).collect())
            .collect();
        let titles: Vec<&str> = shown
            .iter()
            .map(|&i| self.columns[i].title.unwrap_or_default())
            .collect();
        let widths: Vec<usize> = (0..shown.len())
            .map(|c| {
                cells
                    .iter()
                    .map(|row| row[c].chars().count())
                    .chain([titles[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        // A column is right-aligned when its values are numbers.
        let right: Vec<bool> = shown
            .iter()
            .map(|&i| rows.first().is_some_and(|row| row[i].right_aligned()))
            .collect();
        let mut out = String::new();
        let mut line = |values: &[&str]| {
            let mut text = String::new();
            for (c, value) in values.iter().enumerate() {
                if c > 0 {
                    text.push_str("  ");
                }
                let pad = widths[c].saturating_sub(value.chars().count());
                if right[c] {
                    text.extend(std::iter::repeat_n(' ', pad));
                    text.push_str(value);
                } else {
                    text.push_str(value);
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&titles);
        for row in &cells {
            line(&row.iter().map(String::as_str).collect::<Vec<_>>());
        }
        out
    }

    /// A header row of snake_case names, then one line per row.
    pub fn csv(&self) -> String {
        let shown: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].key.is_some())
            .collect();
        let mut out = String::new();
        let header: Vec<&str> = shown
            .iter()
            .map(|&i| self.columns[i].key.unwrap_or_default())
            .collect();
        let _ = writeln!(out, "{}", header.join(","));
        for row in &self.rows {
            let fields: Vec<String> = shown.iter().map(|&i| row[i].csv()).collect();
            let _ = writeln!(out, "{}", fields.join(","));
        }
        out
    }
}

/// The columns [`totals_cells`] fills, after whatever names the group.
pub(crate) const TOTALS_COLUMNS: [Column; 6] = [
    col("CALLS", "calls"),
    col("IN", "input_tokens"),
    col("OUT", "output_tokens"),
    col("CACHE READ", "cache_read_tokens"),
    col("CACHE WRITE", "cache_write_tokens"),
    col("COST", "cost_usd"),
];

/// A group's sums as cells for [`TOTALS_COLUMNS`].
pub(crate) fn totals_cells(totals: &Totals, estimated: bool) -> [Cell; 6] {
    [
        Cell::Count(totals.calls),
        Cell::Count(totals.input_tokens),
        Cell::Count(totals.output_tokens),
        Cell::Count(totals.cache_read_tokens),
        Cell::Count(totals.cache_write_tokens),
        Cell::Usd {
            amount: totals.cost_usd,
            estimated,
        },
    ]
}

/// The sum of several groups.
pub(crate) fn sum<'a>(groups: impl IntoIterator<Item = &'a Totals>) -> Totals {
    groups.into_iter().fold(Totals::default(), |acc, t| Totals {
        calls: acc.calls + t.calls,
        input_tokens: acc.input_tokens + t.input_tokens,
        output_tokens: acc.output_tokens + t.output_tokens,
        cache_read_tokens: acc.cache_read_tokens + t.cache_read_tokens,
        cache_write_tokens: acc.cache_write_tokens + t.cache_write_tokens,
        cost_usd: acc.cost_usd + t.cost_usd,
    })
}

/// The note under a table that marked estimated costs with `~`.
pub(crate) const ESTIMATED_NOTE: &str =
    "~ the model has no price in the catalog: its calls are counted at $0";

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut table = Table::new(&[
            col("NAME", "name"),
            col("CALLS", "calls"),
            table_only("NOTE"),
            csv_only("estimated"),
            col("COST", "cost_usd"),
        ]);
        table.push(vec![
            Cell::Text("a, \"b\"".into()),
            Cell::Count(12),
            Cell::Maybe(None),
            Cell::Flag(false),
            Cell::Usd {
                amount: 0.5,
                estimated: false,
            },
        ]);
        table.push(vec![
            Cell::Text("longer name".into()),
            Cell::Count(3),
            Cell::Maybe(Some("x".into())),
            Cell::Flag(true),
            Cell::Usd {
                amount: 0.0,
                estimated: true,
            },
        ]);
        table.footer(vec![
            Cell::Text("total".into()),
            Cell::Count(15),
            Cell::Maybe(None),
            Cell::Flag(false),
            Cell::Usd {
                amount: 0.5,
                estimated: false,
            },
        ]);
        table
    }

    #[test]
    fn a_table_aligns_text_left_and_numbers_right() {
        assert_eq!(
            sample().text(),
            "NAME         CALLS  NOTE      COST\n\
             a, \"b\"          12  -      $0.5000\n\
             longer name      3  x     ~$0.0000\n\
             total           15  -      $0.5000\n"
        );
    }

    #[test]
    fn csv_quotes_what_needs_it_and_leaves_out_the_total() {
        assert_eq!(
            sample().csv(),
            "name,calls,estimated,cost_usd\n\
             \"a, \"\"b\"\"\",12,false,0.500000\n\
             longer name,3,true,0.000000\n"
        );
    }
}
