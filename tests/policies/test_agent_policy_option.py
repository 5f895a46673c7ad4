"""Option ``policy`` of the agent schedulers as 'module:callable': every way it can be wrong is one
PolicyOptionError naming the option and what is wrong, when the scheduler is created."""
import pytest

from batsched_py.policies.options import PolicyOptionError
from batsched_py.scheduler import create

MODULES = {
    "audit_raises_on_import": "1 / 0\n",
    "audit_bad_syntax": "def f(:\n",
    "audit_classes": "class NeedsArgument:\n    def __init__(self, x):\n        pass\n\nVALUE = 3\n",
}


@pytest.mark.parametrize("spec, words", [
    ("audit_no_such_module:f", "cannot import 'audit_no_such_module'"),
    ("audit_classes:missing", "'audit_classes' has no 'missing'"),
    ("audit_classes:VALUE", "audit_classes:VALUE is not callable"),
    ("audit_classes:", "is neither a baseline"),
    # these were a ZeroDivisionError, a SyntaxError and a TypeError from deep inside
    ("audit_raises_on_import:f", "importing 'audit_raises_on_import' failed: ZeroDivisionError: division by zero"),
    ("audit_bad_syntax:f", "importing 'audit_bad_syntax' failed: SyntaxError"),
    ("audit_classes:NeedsArgument", "audit_classes:NeedsArgument() failed: TypeError"),
])
def test_a_bad_module_callable_is_named(tmp_path, monkeypatch, spec, words):
    for name, source in MODULES.items():
        (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PolicyOptionError) as info:
        create("shutdown-agent", {"policy": spec})
    message = str(info.value)
    assert message.startswith("option policy: ") and words in message and "\n" not in message, message
