from typing import List, Optional, Tuple

ALLOWED_ACTIONS: List[str]

class Actions:
    rule_name: str
    stop_training: bool
    message_endpoints: List[Tuple[str, str]]
    def __init__(self, actions_str: Optional[str], rule_name: str) -> None: ...
