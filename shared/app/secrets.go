package app

import (
	"context"
	"fmt"
	"os"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/catraca/catraca/shared/config"
)

// LoadConfig reads the configuration of a Lambda: {{secret:…}}
// placeholders in the environment are filled from AWS Secrets Manager
// first, once per cold start.
func LoadConfig(ctx context.Context) (config.Config, error) {
	if err := resolveSecrets(ctx); err != nil {
		return config.Config{}, err
	}
	return config.Load()
}

// resolveSecrets fills the placeholders; without any (the local stack) it
// does nothing and needs no AWS credentials.
func resolveSecrets(ctx context.Context) error {
	environ := os.Environ()
	if !config.HasSecretRefs(environ) {
		return nil
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("aws config: %w", err)
	}
	sm := secretsmanager.NewFromConfig(awsCfg)
	vars, err := config.ResolveSecrets(ctx, environ, func(ctx context.Context, id string) (string, error) {
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &id})
		if err != nil {
			return "", err
		}
		if out.SecretString == nil {
			return "", fmt.Errorf("secret %s has no string value", id)
		}
		return *out.SecretString, nil
	})
	if err != nil {
		return err
	}
	for k, v := range vars {
		os.Setenv(k, v)
	}
	return nil
}
