//! `-c` parsing: a comma-separated list of column keys, or `all`.

use std::str::FromStr;

use crate::column::{COLUMNS, Column, valid_keys};

/// The chosen columns, in the order given (duplicates allowed, as in
/// PyProf).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnList(pub Vec<Column>);

/// A bad `-c` value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectError {
    /// Not a column key.
    #[error("'{key}' is not a column; valid columns are {} (or all)", valid_keys())]
    Unknown {
        /// What was given.
        key: String,
    },
}

impl FromStr for ColumnList {
    type Err = SelectError;

    fn from_str(s: &str) -> Result<ColumnList, SelectError> {
        if s == "all" {
            return Ok(ColumnList(COLUMNS.iter().map(|c| c.column).collect()));
        }
        s.split(',')
            .map(|key| {
                COLUMNS
                    .iter()
                    .find(|c| c.key == key)
                    .map(|c| c.column)
                    .ok_or_else(|| SelectError::Unknown {
                        key: key.to_owned(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(ColumnList)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn parses() {
        let l: ColumnList = "idx,dir,idx".parse().unwrap();
        assert_eq!(l.0, vec![Column::Idx, Column::Dir, Column::Idx]);
        assert_eq!("all".parse::<ColumnList>().unwrap().0.len(), 20);
        let e = "idx,bogus".parse::<ColumnList>().unwrap_err();
        assert!(
            e.to_string()
                .starts_with("'bogus' is not a column; valid columns are idx,seq,")
        );
        assert!("".parse::<ColumnList>().is_err());
        assert!("idx,".parse::<ColumnList>().is_err());
    }

    proptest! {
        #[test]
        fn valid_selection_round_trips(ix in prop::collection::vec(0..COLUMNS.len(), 1..8)) {
            let text = ix.iter().map(|&i| COLUMNS[i].key).collect::<Vec<_>>().join(",");
            let parsed: ColumnList = text.parse().unwrap();
            prop_assert_eq!(parsed.0, ix.iter().map(|&i| COLUMNS[i].column).collect::<Vec<_>>());
        }
    }
}
