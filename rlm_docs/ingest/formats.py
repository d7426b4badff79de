"""Names of the readers and OCR modes (import-light: the CLI builds its parser from them)."""

FORMATS = ("ocr", "pages", "markdown", "pdftotext", "marked", "pdf")
OCR_MODES = ("auto", "mistral", "local")
