from typing import Any, Optional, Tuple

def storage_options(s3_endpoint: Optional[str] = ..., s3_region: Optional[str] = ...,
                    s3_profile: Optional[str] = ..., s3_addressing_style: Optional[str] = ...,
                    s3_ca_bundle: Optional[str] = ..., s3_credentials: Optional[Tuple[Optional[str], ...]] = ...,
                    s3_max_attempts: Optional[int] = ..., s3_backoff_ms: Optional[int] = ...,
                    s3_stall_timeout_ms: Optional[int] = ...) -> Optional[Any]: ...
