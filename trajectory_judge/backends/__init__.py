"""Model backends: one client protocol, with Ollama and OpenAI-compatible (llama-server) clients.

Below the testbed and the judges, so both the organic agent and the LLM judges talk to a model
through the same client.
"""
