from typing import Any, Optional, Tuple

import numpy as np

class DLPackValue:
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    def __dlpack__(self, *, stream: Any = ..., max_version: Optional[Tuple[int, int]] = ...,
                   dl_device: Optional[Tuple[int, int]] = ..., copy: Optional[bool] = ...) -> Any: ...

def to_dlpack(array: np.ndarray) -> DLPackValue: ...
