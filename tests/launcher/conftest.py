from launcher_support import fake_mode  # noqa: F401  (fixture)
