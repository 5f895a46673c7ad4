"""Hypothesis strategies shared by the decoder's property tests."""
from hypothesis import strategies as st

#: Any JSON value (NaN and infinities included, as Python's json writes them; integers beyond
#: 64 bits, which readers may treat differently).
json_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2 ** 80), max_value=2 ** 80)
                | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=4)
                           | st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=20)
