"""A researcher's own table (a CSV or Parquet file) read as a clean frame, the way they meant it.

Repairs are made with one DataWarning line naming the column; what cannot be read right is
refused with one line before any run:

- the file: missing, or a CSV header with a column name twice (pandas would rename one) ->
  refused; the CSV separator is sniffed among , ; tab | unless dataset.sep names it;
- text cells: surrounding spaces stripped (`"Adelie "` would be a class of its own), an empty
  cell is missing;
- a text column of numbers but for missing markers (`?`, `-`, `n/a`, ...: MISSING_MARKERS; the
  numbers at least NUMERIC_SHARE of the filled cells) -> numeric, the markers missing; with
  other tokens (`A`, `3+`) -> categories, warned; numbers with a decimal comma under
  dataset.decimal=point -> refused;
- infinite numbers -> missing, warned; Parquet datetimes expanded as dates below, durations in
  seconds;
- a text column of dates of one format -> expanded into <column>.year, .month, .day,
  .day_of_week (day or month first as the cells show it);
- a text column with a different value in (almost) every row, or whole numbers different in
  every row (an ID, a name, free text) -> kept, warned, with the setting that drops it
  (dataset.drop);
- a text column of numbers in disguise ($3,750, 12 %, 6,102) -> kept as categories, warned;
- the target column: only stripped (a class label is never read as missing).
- a file that is not UTF-8 -> read as Windows-1252, warned.
"""

import csv
import hashlib
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

READER_VERSION = 1  # part of a file job's run_key: bump it when a file would be read otherwise
SEPARATORS = ",;\t|"
SEPARATOR_NAMES = {"tab": "\t", "semicolon": ";", "comma": ",", "pipe": "|"}
FALLBACK_ENCODING = "cp1252"  # of a CSV file that is not UTF-8: Excel's on Windows
SNIFF_BYTES = 64 * 1024
MISSING_MARKERS = {"?", "-", "--", ".", "na", "n/a", "n.a.", "nan", "null", "none", "nil",
                   "missing", "unknown", "#n/a", "#value!", "#div/0!"}  # lower case
NUMERIC_SHARE = 0.5  # of a column's filled cells that must be numbers for markers to be missing
MOSTLY_NUMERIC = 0.9  # of a text column's cells that look like decorated numbers, to be warned
NUMBER_IN_TEXT = (r"[$€£¥]\s?-?[\d.,']*\d|-?[\d.,']*\d\s?%|-?\d{1,3}(,\d{3})+(\.\d+)?"
                  r"|-?\d{1,3}(\.\d{3})+(,\d+)?")  # $3,750  12 %  6,102.5  3.750,0
DATE_SHARE = 0.95  # of a text column's filled cells that must parse as dates
ID_MIN_ROWS = 20  # a column unique per row in fewer rows is not called an ID
ID_SHARE = 0.9  # of the rows a text column has distinct values in, to be called an ID
DATE_PARTS = ("year", "month", "day", "day_of_week")


class DataWarning(UserWarning):
    """A table was read with a repair (a junk token as missing, stripped spaces, an expanded
    date) or holds a column that is likely not a feature (an ID)."""


def warn(message: str) -> None:
    warnings.warn(message, DataWarning, stacklevel=3)


def absolute_path(path: str) -> Path:
    return Path(path).expanduser().absolute()


def table_file(path: str) -> Path:
    """The absolute path of a dataset file; FileNotFoundError naming it if there is none."""
    file = absolute_path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no dataset file {file}")
    return file


def read_table(path: str, target: str, sep: str | None = None, decimal: str = ".",
               drop: tuple[str, ...] = ()) -> pd.DataFrame:
    """The file as a frame of clean columns (module docstring), `drop` left out; the target
    column is only stripped and junk-checked, never expanded or dropped."""
    file = table_file(path)
    if file.suffix == ".parquet":
        frame = pd.read_parquet(file)
    else:
        sep = SEPARATOR_NAMES.get(sep, sep) if sep else sniff_separator(file)
        check_unique_header(file, sep)
        frame = read_csv(file, sep, decimal)
    if target in drop:
        raise ValueError(f"dataset.drop names the target column '{target}' of {file.name}")
    unknown = [name for name in drop if name not in frame.columns]
    if unknown:
        raise ValueError(f"dataset.drop names no column of {file.name}: {', '.join(unknown)}; "
                         f"columns: {', '.join(map(str, frame.columns))}")
    frame = frame.drop(columns=list(drop))
    return clean_frame(frame, target, file.name, decimal)


def read_csv(file: Path, sep: str, decimal: str) -> pd.DataFrame:
    """pandas' read_csv in UTF-8, else in Windows-1252 (Excel's CSV on Windows) with a warning.
    No thousands separator is assumed: a cell pandas cannot read as a number stays text, and is
    read by numeric_with_junk (which reads 29.0 under a decimal comma too) or warned."""
    try:
        return pd.read_csv(file, sep=sep, decimal=decimal)
    except UnicodeDecodeError as error:
        warn(f"{file.name} is not UTF-8 ({error.reason} at byte {error.start}): read as "
             f"{FALLBACK_ENCODING}; save it as UTF-8 if its text looks wrong")
        return pd.read_csv(file, sep=sep, decimal=decimal, encoding=FALLBACK_ENCODING)


def sniff_separator(file: Path) -> str:
    """The CSV separator among SEPARATORS that csv.Sniffer finds in the file's first bytes;
    a comma when it finds none (a file of one column)."""
    with file.open(newline="", errors="replace") as stream:
        sample = stream.read(SNIFF_BYTES)
    try:
        return csv.Sniffer().sniff(sample, delimiters=SEPARATORS).delimiter
    except csv.Error:
        return ","


def check_unique_header(file: Path, sep: str) -> None:
    """ValueError naming the column names that the CSV header holds more than once."""
    with file.open(newline="", errors="replace") as stream:
        header = next(csv.reader(stream, delimiter=sep), [])
    names = [name.strip() for name in header]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{file.name} has columns of the same name: {', '.join(repeated)}; "
                         "rename them in the file")


def clean_frame(frame: pd.DataFrame, target: str, source: str,
                decimal: str = ".") -> pd.DataFrame:
    """Every text column stripped and, unless it is the target, read as numbers with junk
    tokens missing, or expanded as dates, or warned as an ID (module docstring)."""
    frame.columns = [name.strip() if isinstance(name, str) else name for name in frame.columns]
    columns = {}
    for name, column in frame.items():
        if name == target:
            column = stripped(column, name, source) if is_text(column) else column
        elif is_text(column):
            column = stripped(column, name, source)
            numbers = numeric_with_junk(column, name, source, decimal)
            if numbers is not None:
                column = numbers
            else:
                dates = as_dates(column, name, source)
                if dates is not None:
                    columns |= date_parts(dates, name, source)
                    continue
        elif pd.api.types.is_datetime64_any_dtype(column.dtype):
            columns |= date_parts(column, name, source)
            continue
        elif pd.api.types.is_timedelta64_dtype(column.dtype):
            column = column.dt.total_seconds()
        elif pd.api.types.is_float_dtype(column.dtype) and np.isinf(column).any():
            warn(f"{source}: column '{name}' has {int(np.isinf(column).sum())} infinite values: "
                 "read as missing")
            column = column.replace([np.inf, -np.inf], np.nan)
        if name != target and looks_like_id(column):
            warn(f"{source}: column '{name}' has {column.nunique()} distinct values in "
                 f"{len(column)} rows (an ID or free text?); it is used as a feature: "
                 f"dataset.drop=[{name}] leaves it out")
        columns[name] = column
    return pd.DataFrame(columns, index=frame.index)


def date_parts(dates: pd.Series, name: str, source: str) -> dict[str, pd.Series]:
    """<name>.year, .month, .day, .day_of_week of a column of dates, with a warning."""
    parts = {f"{name}.{part}": getattr(dates.dt, part).astype("Float64") for part in DATE_PARTS}
    warn(f"{source}: column '{name}' holds dates: expanded into {', '.join(parts)} "
         f"(dataset.drop=[{name}] leaves it out)")
    return parts


def is_text(column: pd.Series) -> bool:
    return column.dtype == object or pd.api.types.is_string_dtype(column.dtype)


def stripped(column: pd.Series, name: str, source: str) -> pd.Series:
    """The column's strings without surrounding spaces, an empty string missing; one warning
    when any value changed."""
    text = column.map(lambda value: value.strip() if isinstance(value, str) else value)
    text = text.mask(text.eq(""))
    changed = column.notna() & text.ne(column) & text.notna()
    if changed.any():
        example = column[changed].iloc[0]
        warn(f"{source}: column '{name}': {int(changed.sum())} values had surrounding spaces, "
             f"stripped (e.g. {example!r})")
    return text


def numeric_with_junk(column: pd.Series, name: str, source: str,
                      decimal: str) -> pd.Series | None:
    """The column as float64 when at least NUMERIC_SHARE of its filled cells are numbers and
    every other cell is a MISSING_MARKERS token (read as missing, with a warning); None
    otherwise, with a warning when the column is still mostly numbers (other tokens, $3,750).
    Numbers written with a decimal comma (not a thousands comma: 6,102) while dataset.decimal
    is point are refused (they would become categories)."""
    filled = column.dropna().astype(str)
    if filled.empty:
        return None
    numbers = pd.to_numeric(filled.str.replace(",", ".") if decimal == "," else filled,
                            errors="coerce")
    junk = filled[numbers.isna()]
    tokens = junk.unique()
    numeric_share = 1 - len(junk) / len(filled)
    markers = all(str(token).lower() in MISSING_MARKERS for token in tokens)
    if numeric_share >= NUMERIC_SHARE and markers:
        if len(tokens):
            shown = ", ".join(repr(token) for token in tokens)
            warn(f"{source}: column '{name}' is numeric but for {len(junk)} cells of {shown}: "
                 "read as missing")
        return numbers.reindex(column.index).astype(np.float64)
    decimal_comma = filled.str.fullmatch(r"-?\d*,\d+") & ~filled.str.fullmatch(
        r"-?\d{1,3}(,\d{3})+")
    if decimal == "." and decimal_comma.mean() >= NUMERIC_SHARE:
        raise ValueError(f"{source}: column '{name}' holds numbers with a decimal comma (e.g. "
                         f"{filled[decimal_comma].iloc[0]!r}): set dataset.decimal=comma")
    if numeric_share >= NUMERIC_SHARE:
        shown = ", ".join(repr(token) for token in tokens[:3])
        warn(f"{source}: column '{name}' holds numbers in {numeric_share:.0%} of its cells and "
             f"{len(tokens)} other values ({shown}{', ...' * (len(tokens) > 3)}): read as "
             "categories")
    elif filled.str.fullmatch(NUMBER_IN_TEXT).mean() >= MOSTLY_NUMERIC:
        warn(f"{source}: column '{name}' looks numeric (e.g. {filled.iloc[0]!r}) but is read "
             f"as {filled.nunique()} categories: write plain numbers in the file")
    return None


def as_dates(column: pd.Series, name: str, source: str) -> pd.Series | None:
    """The column as datetimes when at least DATE_SHARE of its filled cells parse as dates of
    one format (not bare numbers, which stay numbers); None otherwise. Day and month are read in
    the order the cells show (a first field above 12: day first); where no cell shows it, month
    first, with a warning."""
    filled = column.dropna().astype(str)
    fields = filled.str.extract(r"^(\d{1,4})\D(\d{1,2})\D\d{1,4}")
    if filled.empty or fields[0].isna().any():
        return None
    first, second = fields[0].astype(int), fields[1].astype(int)
    dayfirst = bool((fields[0].str.len() <= 2).all() and (first > 12).any())
    if (fields[0].str.len() <= 2).all() and not (first > 12).any() and not (second > 12).any():
        warn(f"{source}: column '{name}': no date shows whether the day or the month comes "
             "first: read month first")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pandas' "could not infer format"
        dates = pd.to_datetime(column, errors="coerce", dayfirst=dayfirst)
    if dates[column.notna()].notna().mean() < DATE_SHARE:
        return None
    return dates


def looks_like_id(column: pd.Series) -> bool:
    """In at least ID_MIN_ROWS rows: a text column with a different value in at least ID_SHARE
    of them (names, IDs, free text), or whole numbers different in every row (a row number, a
    customer id)."""
    if len(column) < ID_MIN_ROWS:
        return False
    if is_text(column):
        return column.nunique() >= ID_SHARE * len(column)
    return pd.api.types.is_integer_dtype(column.dtype) and column.is_unique


def data_sha256(path: str) -> str:
    """sha256 of a dataset file's bytes: part of the job's run_key, so an edited file reruns."""
    stat = table_file(path).stat()
    return _sha256(str(table_file(path)), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=64)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """Hashed once per file version (its size and mtime key the cache)."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
