# Settlement batches are seconds apart and support compares times across pages: every date and time
# reads the same way everywhere, to the second, with its zone ("2026-11-30 14:11:05 UTC").
DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i:s T"
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i:s"
