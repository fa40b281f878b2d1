"""The shared kernel below every app: the errors the services raise, the update of a model's fields,
the parsing of money. It imports none of our packages (tests/test_architecture.py); every app, and
backoffice, may use it."""
