"""torch.nn.functional of the numpy stand-in: npshim.F, returning stand-in tensors."""
import npshim
from torch import _wrap

for _name, _fn in vars(npshim.F).items():
    globals()[_name] = _wrap(_fn)
