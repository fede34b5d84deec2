from pydantic import PostgresDsn, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    database_url: PostgresDsn
    stripe_api_key: SecretStr
    debug: bool = False
    allowed_hosts: list[str] = ["localhost"]


settings = Settings()  # reads .env locally, env vars in production
