"""A researcher's own table (a CSV or Parquet file) read as a clean frame, the way they meant it.

Repairs are made with one DataWarning line naming the column; what cannot be read right is
refused with one line before any run (docs/own_data.md states every rule and why):

- the file: missing, or a CSV header with a column name twice (pandas would rename one) ->
  refused; the CSV separator is sniffed among , ; tab | unless dataset.sep names it; pandas
  types whole numbers and the decimals no thousands point wrote (read_csv), every other column
  is read as text and typed here;
- text cells: surrounding spaces stripped (`"Adelie "` would be a class of its own); missing:
  an empty cell, a token of NA_MARKERS (NaN, NULL, #N/A, ...) and one of dataset.na_values;
  the LEVEL_WORDS "None" and "NA" are missing in a numeric column and a level (or class) in a
  text column, warned unless the column's other levels are written like them;
- numbers: a decimal mark (dataset.decimal) and a thousands separator (dataset.thousands, else
  detected: thousands_separator) read in each column as one format; a column that fits two
  readings, or that contradicts the stated ones, is refused naming the setting that decides;
- a text column of numbers but for missing markers (`?`, `-`, `n/a`, ...: MISSING_MARKERS; the
  numbers at least NUMERIC_SHARE of the filled cells) -> numeric, the markers missing; with
  other tokens (`A`, `3+`) -> categories, warned;
- infinite numbers -> missing, warned; Parquet datetimes expanded as dates below, durations in
  seconds;
- a text column of dates of one format -> expanded into <column>.year, .month, .day,
  .day_of_week (day or month first as the cells show it);
- a text column with a different value in (almost) every row, or whole numbers different in
  every row (an ID, a name, free text) -> kept, warned, with the setting that drops it
  (dataset.drop);
- a text column of numbers in disguise ($3,750, 12 %) -> kept as categories, warned;
- the target column: typed as a feature is, but never expanded, dropped, or given the lab's
  MISSING_MARKERS; its "None" and "NA" are classes.
- a file that is not UTF-8 -> read as Windows-1252, warned.
"""

import csv
import hashlib
import re
import warnings
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

READER_VERSION = 2  # part of a file job's run_key: bump it when a file would be read otherwise
SEPARATORS = ",;\t|"
SEPARATOR_NAMES = {"tab": "\t", "semicolon": ";", "comma": ",", "pipe": "|"}
FALLBACK_ENCODING = "cp1252"  # of a CSV file that is not UTF-8: Excel's on Windows
SNIFF_BYTES = 64 * 1024
NA_MARKERS = frozenset({"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                        "1.#QNAN", "<NA>", "N/A", "NULL", "NaN", "n/a", "nan",
                        "null"})  # pandas' default missing markers but LEVEL_WORDS: always missing
LEVEL_WORDS = ("NA", "None")  # pandas' markers that are levels in real tables (North America,
# Cars93's AirBags "None"): missing in a numeric column only (R writes NA for a missing number)
MISSING_MARKERS = {"?", "-", "--", ".", "na", "n/a", "n.a.", "nan", "null", "none", "nil",
                   "missing", "unknown", "#n/a", "#value!", "#div/0!"}  # lower case
NUMERIC_SHARE = 0.5  # of a column's filled cells that must be numbers for markers to be missing
MOSTLY_NUMERIC = 0.9  # of a text column's cells that look like decorated numbers, to be warned
NUMBER_IN_TEXT = (r"[$€£¥]\s?-?[\d.,']*\d|-?[\d.,']*\d\s?%|-?\d{1,3}(,\d{3})+(\.\d+)?"
                  r"|-?\d{1,3}(\.\d{3})+(,\d+)?")  # $3,750  12 %  6,102.5  3.750,0
SPACES = " \u00a0\u202f\u2009"  # a space, a no-break space, a narrow no-break and a thin space
THOUSANDS_NAMES = {",": "comma", ".": "point", " ": "space", "'": "apostrophe", "": "none"}
BOOLEANS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False,
            "false": False}  # pandas' default true_values and false_values
DATE_SHARE = 0.95  # of a text column's filled cells that must parse as dates
ID_MIN_ROWS = 20  # a column unique per row in fewer rows is not called an ID
ID_SHARE = 0.9  # of the rows a text column has distinct values in, to be called an ID
DATE_PARTS = ("year", "month", "day", "day_of_week")


class DataWarning(UserWarning):
    """A table was read with a repair (a junk token as missing, stripped spaces, an expanded
    date) or holds a column that is likely not a feature (an ID)."""


class NumberFormat(NamedTuple):
    """How a file writes its numbers: the decimal mark (`.` or `,`), the thousands separator
    (None: detected per column; "": none; `,` `.` `'`, or " " for any of SPACES), and whether
    some cell of the file shows a decimal point that cannot be a thousands point (`15.9`)."""

    decimal: str = "."
    thousands: str | None = None
    decimal_point_shown: bool = False


POINT_DECIMAL = NumberFormat()  # pandas' reading: a decimal point, thousands detected


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
               drop: tuple[str, ...] = (), thousands: str | None = None,
               na_values: tuple[str, ...] = ()) -> pd.DataFrame:
    """The file as a frame of clean columns (module docstring), `drop` left out; the target
    column is typed and junk-checked, never expanded or dropped. `thousands`: the separator
    (None: detected; "": none); `na_values`: tokens read as missing in every text column."""
    if thousands == decimal:
        raise ValueError(f"dataset.thousands and dataset.decimal are both "
                         f"{THOUSANDS_NAMES[decimal]}: a number has one decimal mark")
    file = table_file(path)
    if file.suffix == ".parquet":
        frame = pd.read_parquet(file)
    else:
        sep = SEPARATOR_NAMES.get(sep, sep) if sep else sniff_separator(file)
        check_unique_header(file, sep)
        frame = read_csv(file, sep, decimal, na_values)
    if target in drop:
        raise ValueError(f"dataset.drop names the target column '{target}' of {file.name}")
    unknown = [name for name in drop if name not in frame.columns]
    if unknown:
        raise ValueError(f"dataset.drop names no column of {file.name}: {', '.join(unknown)}; "
                         f"columns: {', '.join(map(str, frame.columns))}")
    frame = frame.drop(columns=list(drop))
    return clean_frame(frame, target, file.name, NumberFormat(decimal, thousands),
                       frozenset(NA_MARKERS | set(na_values)))


def read_csv(file: Path, sep: str, decimal: str, na_values: tuple[str, ...] = ()) -> pd.DataFrame:
    """The file, an empty cell and `na_values` (as pandas matches them: -999 is -999.0 too)
    missing and nothing else; pandas types only the columns its reading cannot get wrong (whole
    numbers, and under a decimal point the decimals that no thousands point wrote:
    hides_thousands); the others are text, typed by clean_frame, which knows the file's number
    format and missing markers. In UTF-8, else in Windows-1252 (Excel's CSV on Windows) with a
    warning."""
    options = {"sep": sep, "keep_default_na": False, "na_values": ["", *na_values]}
    try:
        frame = pd.read_csv(file, **options)
    except UnicodeDecodeError as error:
        warn(f"{file.name} is not UTF-8 ({error.reason} at byte {error.start}): read as "
             f"{FALLBACK_ENCODING}; save it as UTF-8 if its text looks wrong")
        options["encoding"] = FALLBACK_ENCODING
        frame = pd.read_csv(file, **options)
    as_text = [name for name, column in frame.items() if pd.api.types.is_float_dtype(column)
               and (decimal == "," or hides_thousands(column))]  # fmt: skip
    if as_text:
        frame[as_text] = pd.read_csv(file, usecols=as_text, dtype=str, **options)[as_text]
    return frame


def hides_thousands(column: pd.Series) -> bool:
    """Whether a float column as pandas read it may be the reading of thousands points (2.760
    is 2.76): every value whole below 1000, or from 1 to 1000 with at most 3 decimals."""
    values = column.dropna().abs()
    whole = values.eq(np.round(values))
    milli = values * 1000
    three_decimals = values.ge(1) & np.isclose(milli, np.round(milli), rtol=0, atol=1e-6)
    return bool((values.lt(1000) & (whole | three_decimals)).all())


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
                number_format: NumberFormat = POINT_DECIMAL,
                markers: frozenset[str] = NA_MARKERS) -> pd.DataFrame:
    """Every text column stripped, its `markers` missing, and read as numbers (with junk
    tokens missing unless it is the target) or, unless it is the target, expanded as dates, or
    kept as text; features are warned as an ID when they look like one (module docstring)."""
    frame.columns = [name.strip() if isinstance(name, str) else name for name in frame.columns]
    texts = {name: stripped(column, name, source).mask(lambda text: text.isin(markers))
             for name, column in frame.items() if is_text(column)}  # fmt: skip
    number_format = number_format._replace(decimal_point_shown=any(
        pd.api.types.is_float_dtype(column) and not hides_thousands(column)
        for _, column in frame.items()) or any(map(shows_decimal_point, texts.values())))
    columns = {}
    for name, column in frame.items():
        if name in texts:
            column = texts[name]
            numbers = column_numbers(column, name, source, number_format, name == target)
            if numbers is not None:
                column = numbers
            elif name != target and (dates := as_dates(column, name, source)) is not None:
                columns |= date_parts(dates, name, source)
                continue
            else:
                warn_level_words(column, name, source, name == target)
        elif pd.api.types.is_datetime64_any_dtype(column.dtype) and name != target:
            columns |= date_parts(column, name, source)
            continue
        elif pd.api.types.is_timedelta64_dtype(column.dtype):
            column = column.dt.total_seconds()
        if name != target and pd.api.types.is_float_dtype(column.dtype) and np.isinf(column).any():
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
    if isinstance(column.dtype, pd.StringDtype):
        text = column.str.strip()
    else:
        text = column.map(lambda value: value.strip() if isinstance(value, str) else value)
    text = text.mask(text.eq(""))
    changed = column.notna() & text.ne(column) & text.notna()
    if changed.any():
        example = column[changed].iloc[0]
        warn(f"{source}: column '{name}': {int(changed.sum())} values had surrounding spaces, "
             f"stripped (e.g. {example!r})")
    return text


def warn_level_words(column: pd.Series, name: str, source: str, target: bool) -> None:
    """One warning per LEVEL_WORDS token kept as a level (a class of the target) of a text
    column, naming it and the setting that reads it as missing; none when every other level
    is written like it (NA among the codes EU, AS; None among Driver only, Driver & Passenger)."""
    levels = column.dropna().astype(str)
    for word in LEVEL_WORDS:
        rows = int(levels.eq(word).sum())
        others = [level for level in levels.unique() if level != word]
        if rows and not (others and all(written_alike(word, level) for level in others)):
            warn(f"{source}: column '{name}': {word!r} ({rows} rows) read as a "
                 f"{'class' if target else 'level'}, not as missing; if it marks missing "
                 f"values, dataset.na_values=[{word}] says so")


def written_alike(word: str, level: str) -> bool:
    """A code of the same length in capitals (NA, EU), or both capitalised (None, Driver only)."""
    if word.isupper():
        return level.isupper() and len(level) == len(word)
    return level[:1].isupper() and not level.isupper()


def number_pattern(decimal: str, thousands: str = "") -> str:
    """A number written with `decimal` and, if given, grouped in threes by `thousands` (" ":
    any of SPACES): `1,234.5` or `1.234,5`; without `thousands`, any plain number (`1234.5`)."""
    point = re.escape(decimal)
    if not thousands:
        return rf"[+-]?(\d+({point}\d*)?|{point}\d+)([eE][+-]?\d+)?"
    return rf"[+-]?[1-9]\d{{0,2}}({mark_pattern(thousands)}\d{{3}})+({point}\d+)?"


def shows_decimal_point(text: pd.Series) -> bool:
    """Whether a cell is a number with a decimal point that no thousands point could write
    (`15.9`, `0.760`, `1,234.5`; not `2.760`)."""
    filled = text.dropna().astype(str)
    pointed = filled[filled.str.contains(".", regex=False)]
    decimal_point = pointed.str.fullmatch(number_pattern(".")) | pointed.str.fullmatch(
        number_pattern(".", ","))
    return bool((decimal_point & ~pointed.str.fullmatch(number_pattern(",", "."))).any())


def thousands_separator(values: pd.Series, name: str, source: str,
                        number_format: NumberFormat) -> str:
    """The thousands separator of a column's number cells: the stated one (an error naming the
    column where a cell has it out of place), else the one mark every cell fits (grouped in
    threes, or plain), "" if none. A comma under a decimal point is one only when a cell shows
    it (`1,234,567`, `1,234.5`), plain numbers below 1000 sit beside it (`960`, `2,760`), or the
    file shows its decimal point elsewhere; it is not when plain numbers of 4 digits or more
    sit beside it (then it is a decimal comma); else the column is refused as ambiguous. A
    point under a decimal point that can only be a thousands point (`1.234.567`, `1.234,5`)
    refuses the column (dataset.decimal=comma); beside plain numbers below 1000 (`450`,
    `2.760`) it is refused as ambiguous unless the file shows its decimal point elsewhere."""
    decimal, stated = number_format.decimal, number_format.thousands
    if stated == "":
        return stated
    if stated is not None:
        marked = values.str.contains(mark_pattern(stated))
        misplaced = marked & ~values.str.fullmatch(number_pattern(decimal, stated))
        numeric_looking = values.str.fullmatch(rf"[+-]?[\d.,'{SPACES}]*\d").mean()
        if misplaced.any() and numeric_looking >= NUMERIC_SHARE:
            raise ValueError(f"{source}: column '{name}' has {values[misplaced].iloc[0]!r}, "
                             f"which is not grouped in threes by dataset.thousands="
                             f"{THOUSANDS_NAMES[stated]}: fix the setting or the column")
        return stated
    plain = values.str.fullmatch(number_pattern(decimal))
    for mark in (",", ".", " ", "'"):
        if mark == decimal or not values.str.contains(mark_pattern(mark)).any():
            continue
        grouped = values.str.fullmatch(number_pattern(decimal, mark))
        if not grouped.any() or not (grouped | plain).all():
            continue
        if mark != ",":
            return mark
        if values[grouped].str.contains(r"\d,\d{3},|\.").any():
            return mark
        if (plain & values.str.match(r"[+-]?\d{4}")).any():
            continue  # 4500 beside 2,760: the comma is a decimal comma
        if plain.any() or number_format.decimal_point_shown:
            return mark
        raise ambiguous(name, source, values[grouped].iloc[0], mark)
    if decimal == "." and values.str.contains(".", regex=False).any():
        european = values.str.fullmatch(number_pattern(",", "."))
        plain_comma = values.str.fullmatch(number_pattern(","))
        if european.any() and (european | plain_comma).all():
            grouped = values[european]
            shown = grouped.str.contains(r"\.\d{3}\.|,")
            if shown.any():
                raise ValueError(f"{source}: column '{name}' has {grouped[shown].iloc[0]!r}: a "
                                 "point that separates thousands, so the decimal mark is a "
                                 "comma: set dataset.decimal=comma")
            short = values.str.fullmatch(r"[+-]?\d{1,3}")
            if short.any() and short.eq(plain_comma).all() and not (
                    number_format.decimal_point_shown):
                raise ambiguous(name, source, grouped.iloc[0], ".")
    return ""


def mark_pattern(thousands: str) -> str:
    """A regular expression of the thousands separator (" ": any of SPACES)."""
    return f"[{SPACES}]" if thousands == " " else re.escape(thousands)


def ambiguous(name: str, source: str, example: str, mark: str) -> ValueError:
    """The refusal of a column whose `mark` (, or .) may separate thousands or be the decimal
    mark, naming the settings that decide."""
    whole, fraction = example.replace(mark, ""), example.replace(mark, ".")
    if mark == ",":
        advice = ("dataset.thousands=comma if the comma separates thousands, or "
                  "dataset.decimal=comma if it is the decimal mark")
    else:
        advice = ("dataset.decimal=comma if the point separates thousands, or "
                  "dataset.thousands=none if it is the decimal point")
    return ValueError(f"{source}: column '{name}' has {example!r}, which is {whole} with a "
                      f"thousands {THOUSANDS_NAMES[mark]} or {fraction}: nothing in the file "
                      f"decides; set {advice}")


def as_numbers(values: pd.Series, decimal: str, thousands: str) -> pd.Series:
    """The number each cell writes with `decimal` and `thousands` (" ": any of SPACES); NaN
    where a cell is not one (a cell where `thousands` is out of place included)."""
    text = values
    if thousands:
        grouped = values.str.fullmatch(number_pattern(decimal, thousands))
        text = values.where(~grouped, values.str.replace(mark_pattern(thousands), "", regex=True))
    if decimal == ",":
        text = text.str.replace(",", ".", regex=False)
    return pd.to_numeric(text, errors="coerce")


def column_numbers(column: pd.Series, name: str, source: str, number_format: NumberFormat,
                   target: bool = False) -> pd.Series | None:
    """The column as numbers (int64 when whole and complete, else float64) when at least
    NUMERIC_SHARE of its filled cells are numbers in the file's format and every other cell is
    a LEVEL_WORDS token or, for a feature, a MISSING_MARKERS one (read as missing, the latter
    warned); a column of True/False as booleans; None otherwise, with a warning when a feature
    is still mostly numbers (other tokens, $3,750). Numbers with a decimal comma while
    dataset.decimal is point are refused (they would become categories)."""
    filled = column.dropna().astype(str)
    if filled.isin(list(BOOLEANS)).all() and not filled.empty:
        booleans = filled.map(BOOLEANS).reindex(column.index)
        return booleans.astype(bool) if column.notna().all() else booleans.astype(np.float64)
    filled = filled[~filled.isin(LEVEL_WORDS)]  # missing if the column is numeric
    if filled.empty:
        return None
    junk_markers = filled.str.lower().isin(MISSING_MARKERS) & (not target)
    values = filled[~junk_markers]
    thousands = thousands_separator(values, name, source, number_format)
    numbers = as_numbers(values, number_format.decimal, thousands)
    numeric_share = numbers.notna().sum() / len(filled)
    if numbers.notna().all() and numeric_share >= NUMERIC_SHARE:
        if junk_markers.any():
            shown = ", ".join(repr(token) for token in filled[junk_markers].unique())
            warn(f"{source}: column '{name}' is numeric but for {int(junk_markers.sum())} cells "
                 f"of {shown}: read as missing")
        if thousands and number_format.thousands is None:
            warn_thousands(values, numbers, name, source, thousands)
        return numbers.reindex(column.index)
    decimal_comma = values.str.fullmatch(number_pattern(",")) | values.str.fullmatch(
        number_pattern(",", "."))
    with_comma = decimal_comma & values.str.contains(",", regex=False)
    if number_format.decimal == "." and with_comma.any() and (
            decimal_comma.all() or with_comma.sum() >= NUMERIC_SHARE * len(filled)):
        raise ValueError(f"{source}: column '{name}' holds numbers with a decimal comma (e.g. "
                         f"{values[with_comma].iloc[0]!r}): set dataset.decimal=comma")
    if target:
        return None
    tokens = values[numbers.isna()].unique()
    if numeric_share >= NUMERIC_SHARE:
        shown = ", ".join(repr(token) for token in tokens[:3])
        warn(f"{source}: column '{name}' holds numbers in {numeric_share:.0%} of its cells and "
             f"{len(tokens)} other values ({shown}{', ...' * (len(tokens) > 3)}): read as "
             "categories")
    elif filled.str.fullmatch(NUMBER_IN_TEXT).mean() >= MOSTLY_NUMERIC:
        warn(f"{source}: column '{name}' looks numeric (e.g. {filled.iloc[0]!r}) but is read "
             f"as {filled.nunique()} categories: write plain numbers in the file")
    return None


def warn_thousands(values: pd.Series, numbers: pd.Series, name: str, source: str,
                   thousands: str) -> None:
    """One warning naming the column, the detected separator, and a cell with its number."""
    marked = values.str.contains(mark_pattern(thousands))
    setting = THOUSANDS_NAMES[thousands]
    warn(f"{source}: column '{name}': {setting} read as a thousands separator (e.g. "
         f"{values[marked].iloc[0]!r} = {numbers[marked].iloc[0]:.15g}); "
         f"dataset.thousands={setting} states it")


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
