BASE = "/api/v1/conversations/c1"


def messages_url(context: str = "main") -> str:
    return f"{BASE}/contexts/{context}/messages/"
